// SPDX-License-Identifier: MIT
/*
 * trace.c - event handling (see trace.h). The rules for what an event does
 * to the live set are those of include/heapsnoop/event.h: a realloc's old
 * block is released only if it was allocated before the realloc began.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace.h"

/* A new stack with an unmapped frame re-reads the maps at most this often. */
#define MAPS_REFRESH_NS 200000000ULL

struct trace {
	struct trace_opts opts;
	struct tracker *tracker;
	struct stacks *stacks;
	struct trace_stats stats;
	struct proc *procs;
	size_t nprocs, capprocs;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct trace *trace__new(const struct trace_opts *opts)
{
	struct trace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->opts = *opts;
	t->tracker = tracker__new();
	t->stacks = stacks__new();
	if (!t->tracker || !t->stacks) {
		trace__free(t);
		return NULL;
	}
	return t;
}

void trace__free(struct trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nprocs; i++)
		proc_maps__free(t->procs[i].maps);
	free(t->procs);
	tracker__free(t->tracker);
	stacks__free(t->stacks);
	free(t);
}

struct proc *trace__find_proc(const struct trace *t, pid_t pid)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

static void read_maps(struct proc *p)
{
	struct proc_maps *pm;

	if (p->gone)
		return;
	p->maps_read_ns = now_ns();
	if (proc_maps__load(p->pid, &pm) == 0) {
		proc_maps__free(p->maps);
		p->maps = pm;
	}
}

struct proc *trace__add_proc(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		return p;
	if (t->nprocs == t->capprocs) {
		size_t cap = t->capprocs ? t->capprocs * 2 : 8;
		struct proc *v = realloc(t->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->procs = v;
		t->capprocs = cap;
	}
	p = &t->procs[t->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	read_maps(p);
	return p;
}

void trace__refresh_maps(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		read_maps(p);
}

void trace__proc_gone(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		p->gone = true;
}

/* A new stack: make sure the process's maps cover its frames. */
static void check_coverage(struct proc *p, const uint64_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (p->maps && proc_maps__find(p->maps, frames[i]))
			continue;
		if (now_ns() - p->maps_read_ns >= MAPS_REFRESH_NS)
			read_maps(p);
		return;
	}
}

static void uncharge(struct trace *t, const struct live_alloc *a)
{
	struct stack *s = stacks__get(t->stacks, a->stack);

	if (s) {
		s->live_count--;
		s->live_bytes -= a->size;
	}
}

static void release(struct trace *t, uint32_t pid, uint64_t addr, uint64_t before_ts)
{
	struct live_alloc gone;
	int err = tracker__release(t->tracker, pid, addr, before_ts, &gone);

	if (err == 0)
		uncharge(t, &gone);
	else if (err == -ENOENT)
		t->stats.unknown_frees++;
	else
		t->stats.realloc_races++;
}

static void handle_alloc(struct trace *t, const struct hs_event *ev, uint32_t nframes)
{
	const uint64_t *frames = (const uint64_t *)ev->frames;
	uint32_t flags = 0, n = nframes;
	struct live_alloc a, old;
	struct proc *p;
	struct stack *s;
	size_t before;
	int id, replaced;

	if (ev->flags & HS_EVF_TRUNCATED)
		flags |= STACK_TRUNCATED;
	if (ev->flags & HS_EVF_STACK_FAULT)
		flags |= STACK_FAULT;
	/* --snip-pre/--snip-post, then keep the innermost HS_MAX_DEPTH. */
	if (t->opts.snip_pre < n) {
		frames += t->opts.snip_pre;
		n -= t->opts.snip_pre;
	}
	if (!(flags & STACK_TRUNCATED) && t->opts.snip_post < n)
		n -= t->opts.snip_post;
	if (n > HS_MAX_DEPTH) {
		n = HS_MAX_DEPTH;
		flags |= STACK_TRUNCATED;
	}
	if (flags & STACK_TRUNCATED)
		t->stats.truncated_stacks++;
	if (flags & STACK_FAULT)
		t->stats.stack_faults++;

	p = trace__add_proc(t, (pid_t)ev->pid);
	before = stacks__count(t->stacks);
	id = stacks__intern(t->stacks, ev->pid, frames, n, flags);
	if (id < 0) {
		t->stats.no_memory++;
		return;
	}
	if (p && stacks__count(t->stacks) != before)
		check_coverage(p, frames, n);

	if (ev->old_addr) {
		if (ev->old_addr == ev->addr)
			release(t, ev->pid, ev->old_addr, UINT64_MAX); /* resized in place */
		else
			release(t, ev->pid, ev->old_addr, ev->entry_ts);
	}
	a = (struct live_alloc){ .addr = ev->addr, .size = ev->size, .ts = ev->ts,
				 .stack = (uint32_t)id, .pid = ev->pid };
	if (tracker__alloc(t->tracker, &a, &old, &replaced)) {
		t->stats.no_memory++;
		return;
	}
	if (replaced) {
		t->stats.missed_frees++;
		uncharge(t, &old);
	}
	s = stacks__get(t->stacks, (uint32_t)id);
	s->live_count++;
	s->live_bytes += ev->size;
}

int trace__event(struct trace *t, const void *data, size_t len)
{
	const struct hs_event *ev = data;
	uint32_t nframes;

	if (len < HS_EVENT_HDR_SIZE) {
		t->stats.bad_events++;
		return 0;
	}
	switch (ev->type) {
	case HS_EV_ALLOC:
		nframes = ev->nr_frames;
		if (nframes > (len - HS_EVENT_HDR_SIZE) / sizeof(uint64_t) || !ev->addr) {
			t->stats.bad_events++;
			return 0;
		}
		t->stats.allocs++;
		handle_alloc(t, ev, nframes);
		break;
	case HS_EV_FREE:
		t->stats.frees++;
		release(t, ev->pid, ev->addr, ev->entry_ts ? (uint64_t)ev->entry_ts : UINT64_MAX);
		break;
	default:
		t->stats.bad_events++;
		break;
	}
	return 0;
}

struct tracker *trace__tracker(const struct trace *t)
{
	return t->tracker;
}

struct stacks *trace__stacks(const struct trace *t)
{
	return t->stacks;
}

const struct trace_stats *trace__stats(const struct trace *t)
{
	return &t->stats;
}

size_t trace__nprocs(const struct trace *t)
{
	return t->nprocs;
}

struct proc *trace__proc(const struct trace *t, size_t i)
{
	return i < t->nprocs ? &t->procs[i] : NULL;
}

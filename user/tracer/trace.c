// SPDX-License-Identifier: MIT
/*
 * trace.c - event handling (see trace.h). The rules for what an event does
 * to the live set are those of include/heapsnoop/event.h: a realloc's old
 * block is released only if it was allocated before the realloc began.
 *
 * Processes are found by pid in a hash table (htab.h): one lookup per
 * event whatever their number.
 */
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frametab.h"
#include "htab.h"
#include "sampling.h"
#include "heapsnoop/interp.h"
#include "trace.h"

/* A new stack with an unmapped frame re-reads the maps at most this often. */
#define MAPS_REFRESH_NS 200000000ULL

struct trace {
	struct trace_opts opts;
	struct trace_stats stats;
	struct htab *procs;	/* pid -> struct proc */
	struct buildid_cache *build_ids;
	struct unwinder *unwinder;	/* opts.unwind */
	uint64_t seq;		/* the record being handled's (trace__event) */
	uint64_t *spliced;	/* interpreter frames among the native ones */
	struct frametab *frames;	/* frames that are not native code */
};

/* Frames an allocation's stack has at most with its interpreter frames. */
#define TRACE_SPLICED_MAX (HS_BPF_MAX_FRAMES + HS_INTERP_MAX_FRAMES)

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
	t->procs = htab__new(64, NULL, NULL);
	t->build_ids = buildid_cache__new();
	t->frames = frametab__new();
	if (opts->unwind)
		t->unwinder = unwinder__new();
	if (opts->interp_splice)
		t->spliced = calloc(TRACE_SPLICED_MAX, sizeof(*t->spliced));
	if (!t->procs || !t->build_ids || !t->frames || (opts->unwind && !t->unwinder) ||
	    (opts->interp_splice && !t->spliced)) {
		trace__free(t);
		return NULL;
	}
	return t;
}

static void proc_free(struct proc *p)
{
	mapset__free(p->maps);
	jit_names__free(p->jit);
	tracker__free(p->live);
	stacks__free(p->stacks);
	acct__fini(&p->acct);
	free(p);
}

void trace__free(struct trace *t)
{
	if (!t)
		return;
	struct proc *p;
	size_t pos = 0;

	while (t->procs && (p = htab__next(t->procs, &pos, NULL)))
		proc_free(p);
	htab__free(t->procs);
	buildid_cache__free(t->build_ids);
	unwinder__free(t->unwinder);
	frametab__free(t->frames);
	free(t->spliced);
	free(t);
}

static uint64_t pid_hash(pid_t pid)
{
	return htab_hash2((uint32_t)pid, 0);
}

struct proc *trace__find_proc(const struct trace *t, pid_t pid)
{
	return htab__find(t->procs, pid_hash(pid), (uintptr_t)(uint32_t)pid);
}

/* Remove @pid's process from the table and free it, its frames forgotten. */
static void remove_proc(struct trace *t, pid_t pid)
{
	struct proc *p = htab__delete(t->procs, pid_hash(pid), (uintptr_t)(uint32_t)pid);

	if (p)
		proc_free(p);
	frametab__forget(t->frames, (uint32_t)pid);
}

static void read_maps(struct trace *t, struct proc *p)
{
	struct mapset *pm;

	if (p->gone)
		return;
	p->maps_read_ns = now_ns();
	p->maps_read_seq = t->opts.ring_head ? t->opts.ring_head(t->opts.ctx) : t->seq;
	if (!p->comm[0] && proc_maps__comm(p->pid, p->comm, sizeof(p->comm)))
		p->comm[0] = '\0';
	if (proc_maps__load(p->pid, t->build_ids, &pm) == 0) {
		mapset__free(p->maps);
		p->maps = pm;
	}
}

/* @pid's process, created (without reading anything) if new. */
static struct proc *get_proc(struct trace *t, pid_t pid, bool *created)
{
	struct proc *p = trace__find_proc(t, pid);

	*created = false;
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->live = tracker__new();
	p->stacks = stacks__new();
	if (!p->live || !p->stacks || acct__init(&p->acct)) {
		proc_free(p);
		return NULL;
	}
	if (htab__add(t->procs, pid_hash(pid), (uintptr_t)(uint32_t)pid, p)) {
		proc_free(p);
		return NULL;
	}
	*created = true;
	return p;
}

struct proc *trace__add_proc(struct trace *t, pid_t pid)
{
	bool created;
	struct proc *p = get_proc(t, pid, &created);

	if (p && created)
		read_maps(t, p);
	return p;
}

void trace__refresh_maps(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		read_maps(t, p);
}

void trace__proc_gone(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		p->gone = true;
}

int trace__map_add(struct trace *t, pid_t pid, const struct mapping *m)
{
	struct proc *p = trace__add_proc(t, pid);
	struct mapping copy = *m;

	if (!p)
		return -ENOMEM;
	if (!copy.build_id[0])
		proc_maps__build_id(pid, &copy, t->build_ids);
	if (!p->maps)
		p->maps = mapset__new(pid);
	return p->maps ? mapset__add(p->maps, &copy) : -ENOMEM;
}

int trace__map_fork(struct trace *t, pid_t ppid, pid_t pid)
{
	struct proc *parent = trace__add_proc(t, ppid), *p;
	bool created;

	if (!parent)
		return -ENOMEM;
	p = get_proc(t, pid, &created);
	if (!p)
		return -ENOMEM;
	memcpy(p->comm, parent->comm, sizeof(p->comm));
	mapset__free(p->maps);
	p->maps = mapset__new(pid);
	if (!p->maps)
		return -ENOMEM;
	for (size_t i = 0; parent->maps && i < parent->maps->n; i++)
		if (mapset__add(p->maps, &parent->maps->v[i]))
			return -ENOMEM;
	return 0;
}

int trace__map_exec(struct trace *t, pid_t pid)
{
	bool created;
	struct proc *p = get_proc(t, pid, &created);

	if (!p)
		return -ENOMEM;
	mapset__free(p->maps);
	p->maps = mapset__new(pid);
	return p->maps ? 0 : -ENOMEM;
}

void trace__set_comm(struct trace *t, pid_t pid, const char *comm)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

/* A new stack: make sure the process's maps cover its frames. */
static void check_coverage(struct trace *t, struct proc *p, const uint64_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		/* An interpreter's frame (records.h's synthetic address) is in none. */
		if ((p->maps && mapset__find(p->maps, frames[i])) || rec_is_frame_addr(frames[i]))
			continue;
		if (now_ns() - p->maps_read_ns >= MAPS_REFRESH_NS)
			read_maps(t, p);
		return;
	}
}

/* Is return address @ra in JIT code (anonymous executable memory)? */
static bool in_jit(const struct proc *p, uint64_t ra)
{
	const struct mapping *m = p->maps ? mapset__find(p->maps, ra - 1) : NULL;

	return m && (m->flags & MAPPING_ANON);
}

struct jit_kept_ctx {
	struct trace *t;
	uint32_t pid;
};

/* A perf map line that names a frame, first kept: into the frame table, for the dumps. */
static int jit_kept(const struct perf_map_entry *e, void *ctx)
{
	const struct jit_kept_ctx *c = ctx;
	int err = frametab__add_jit(c->t->frames, c->pid, e->start, e->end, e->name);

	/* A range past FRAMETAB_MAX_JIT stays unnamed in the dumps, not a failure. */
	return err == -ENOMEM ? err : 0;
}

/*
 * A new stack: its frames in JIT code named from the process's perf map
 * now, while the process lives (the map is in its root, which goes with
 * it in a container), and the lines kept for the dumps (the frame
 * table's jit records: heapdecode needs nothing of the machine).
 */
static void note_jit(struct trace *t, struct proc *p, const uint64_t *frames, uint32_t n)
{
	struct jit_names_stats before, after;

	if (!p->jit) {
		uint32_t i = 0;

		while (i < n && !in_jit(p, frames[i]))
			i++;
		if (i == n)
			return;
		p->jit = jit_names__new(p->pid);
		if (!p->jit) {
			t->stats.no_memory++;
			return;
		}
	}
	jit_names__stats(p->jit, &before);
	if (jit_names__note(p->jit, p->maps, frames, n, jit_kept,
			    &(struct jit_kept_ctx){ t, (uint32_t)p->pid }) < 0)
		t->stats.no_memory++;
	jit_names__stats(p->jit, &after);
	t->stats.jit_frames += after.frames - before.frames;
	t->stats.jit_named += after.named - before.named;
}

/* The bytes a live block of @size stands for: itself, or if sampled its estimate. */
static uint64_t estimate(const struct trace *t, uint64_t size)
{
	return t->opts.sample_bytes ? sample_estimate(size, t->opts.sample_bytes) : size;
}

/* @a is no longer live: freed by thread @tid, or replaced (!@freed). */
static void uncharge(struct trace *t, struct proc *p, const struct live_alloc *a, uint32_t tid,
		     bool freed)
{
	struct stack *s = stacks__get(p->stacks, a->stack);
	uint64_t bytes = estimate(t, a->size);

	p->live_estimate -= bytes;
	if (s)
		acct__release(&p->acct, s, tid, a->addr, bytes, freed);
}

static void release(struct trace *t, struct proc *p, uint32_t tid, uint64_t addr,
		    uint64_t before_ts)
{
	struct live_alloc gone;
	int err = p ? tracker__release(p->live, addr, before_ts, &gone)
		    : -ENOENT;

	if (err == 0)
		uncharge(t, p, &gone, tid, true);
	else if (err == -ENOENT)
		t->stats.unknown_frees++;
	else
		t->stats.realloc_races++;
}

/*
 * An allocation of process @p with @n frames (walked by BPF, or unwound
 * here) and @evflags (HS_EVF_*).
 */
static void handle_alloc(struct trace *t, struct proc *p, const struct hs_event *ev,
			 const uint64_t *frames, uint32_t n, uint32_t evflags,
			 const struct unwind_grab *grab)
{
	uint32_t flags = 0;
	struct live_alloc a, old;
	struct stack *s;
	size_t before;
	uint64_t est;
	int id, replaced;

	if (evflags & HS_EVF_TRUNCATED)
		flags |= STACK_TRUNCATED;
	if (evflags & HS_EVF_STACK_FAULT)
		flags |= STACK_FAULT;
	/* --snip-pre/--snip-post, then keep the innermost REC_MAX_DEPTH. */
	if (t->opts.snip_pre < n) {
		frames += t->opts.snip_pre;
		n -= t->opts.snip_pre;
	}
	if (!(flags & STACK_TRUNCATED) && t->opts.snip_post < n)
		n -= t->opts.snip_post;
	if (t->opts.interp_splice) {
		uint32_t iflags;

		n = t->opts.interp_splice(t->opts.ictx, ev, t->seq, frames, n,
					  flags & (STACK_TRUNCATED | STACK_FAULT), grab, t->spliced,
					  TRACE_SPLICED_MAX, &iflags);
		frames = t->spliced;
		flags |= iflags;
	}
	if (n > REC_MAX_DEPTH) {
		n = REC_MAX_DEPTH;
		flags |= STACK_TRUNCATED;
	}
	if (flags & STACK_TRUNCATED)
		t->stats.truncated_stacks++;
	if (flags & STACK_FAULT)
		t->stats.stack_faults++;

	if (!p->allocated) {
		p->allocated = true;
		t->stats.procs_seen++;
	}
	before = stacks__count(p->stacks);
	id = stacks__intern(p->stacks, ev->pid, frames, n, flags);
	if (id < 0) {
		t->stats.no_memory++;
		return;
	}
	if (!t->opts.map_records && !(evflags & HS_EVF_USER_STACK) &&
	    stacks__count(p->stacks) != before)
		check_coverage(t, p, frames, n);
	if (stacks__count(p->stacks) != before && !t->opts.no_jit_names)
		note_jit(t, p, frames, n);

	if (ev->old_addr) {
		if (ev->old_addr == ev->addr) {
			release(t, p, ev->tid, ev->old_addr, UINT64_MAX); /* resized in place */
		} else {
			/* The old block is freed: counted so the totals add up. */
			t->stats.frees++;
			t->stats.realloc_moves++;
			release(t, p, ev->tid, ev->old_addr, ev->entry_pos);
		}
	}
	a = (struct live_alloc){ .addr = ev->addr, .size = ev->size, .seq = t->seq,
				 .stack = (uint32_t)id };
	if (tracker__alloc(p->live, &a, &old, &replaced)) {
		t->stats.no_memory++;
		return;
	}
	if (replaced) {
		t->stats.missed_frees++;
		uncharge(t, p, &old, 0, false);
	}
	s = stacks__get(p->stacks, (uint32_t)id);
	est = estimate(t, a.size);
	p->live_estimate += est;
	if (acct__alloc(&p->acct, s, ev->tid, ev->addr, est, tracker__count(p->live),
			p->live_estimate))
		acct__peak_time(&p->acct, now_ns());
}

/* The process ended: to on_exit (its leaks, its peak), then forget it. */
static void handle_exit(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (!p)
		return;
	if (p->allocated)
		t->stats.exits++;
	t->stats.exit_live += tracker__count(p->live);
	t->stats.exit_bytes += p->live_estimate;
	if (p->allocated && t->opts.on_exit) {
		p->gone = true;
		t->opts.on_exit(p, t->opts.ctx);
	}
	remove_proc(t, pid);
}

/*
 * A new image: the old one's heap and stacks are gone (counted as at an
 * exit). Its mappings: from mapping records (-a), which come before this
 * event; otherwise read now from /proc, the new image's, with its name.
 */
static void handle_exec(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);
	struct tracker *live;
	struct stacks *stacks;
	struct acct acct;

	if (!p)
		return;
	live = tracker__new();
	stacks = stacks__new();
	if (!live || !stacks || acct__init(&acct)) {
		tracker__free(live);
		stacks__free(stacks);
		t->stats.no_memory++;
		return;
	}
	t->stats.execs++;
	t->stats.exit_live += tracker__count(p->live);
	t->stats.exit_bytes += p->live_estimate;
	tracker__free(p->live);
	stacks__free(p->stacks);
	acct__fini(&p->acct);
	frametab__forget(t->frames, (uint32_t)pid);
	p->live = live;
	p->stacks = stacks;
	p->acct = acct;	/* the new image's counts start from nothing */
	p->live_estimate = 0;
	jit_names__free(p->jit);
	p->jit = NULL;
	if (!t->opts.map_records) {
		p->comm[0] = '\0';
		read_maps(t, p);
	}
}

struct unwind_ctx {
	struct trace *t;
	struct proc *p;
};

/*
 * The process's mappings for the unwinder; when an address is in none,
 * re-read them if they were read before the allocation (a module mapped
 * since, e.g. by dlopen), or, with mapping records (-a), apply the ones
 * written since the last drain: the mmap's record and the allocation
 * travel in different buffers, so the allocation can be read first.
 */
static const struct mapset *unwind_maps(void *ctx, bool stale)
{
	struct unwind_ctx *c = ctx;
	const struct trace_opts *o = &c->t->opts;

	if (stale && o->map_records && o->sync_maps)
		o->sync_maps(o->ctx);
	else if (stale && !o->map_records && !c->p->gone && c->p->maps_read_seq < c->t->seq)
		read_maps(c->t, c->p);
	return c->p->maps;
}

/* An allocation record: its frames, walked by BPF or to unwind here. */
static void alloc_event(struct trace *t, const struct hs_event *ev, size_t len)
{
	uint64_t unwound[HS_BPF_MAX_FRAMES];
	const uint64_t *frames = (const uint64_t *)ev->frames;
	struct unwind_ctx c = { .t = t };
	uint32_t evflags = ev->flags, uflags, n = ev->nr_frames;
	struct unwind_grab grab = { 0 }, *g = NULL;
	int err;

	if (!ev->addr || (!(ev->flags & HS_EVF_USER_STACK) &&
			  ev->nr_frames > (len - HS_EVENT_HDR_SIZE) / sizeof(uint64_t)) ||
	    ((ev->flags & HS_EVF_USER_STACK) && !t->unwinder)) {
		t->stats.bad_events++;
		return;
	}
	c.p = trace__add_proc(t, (pid_t)ev->pid);
	if (!c.p) {
		t->stats.no_memory++;
		return;
	}
	if (ev->flags & HS_EVF_USER_STACK) {
		tracker__prefetch(c.p->live, ev->addr);
		/* An interpreter's loop keeps the running function's position in a register. */
		if ((ev->flags & HS_EVF_INTERP) && t->opts.interp_grab &&
		    t->opts.interp_grab(t->opts.ictx, (pid_t)ev->pid, &grab.lo, &grab.hi))
			g = &grab;
		err = unwind__stack_grab(t->unwinder, (pid_t)ev->pid, unwind_maps, &c,
					 (const void *)((const char *)ev + HS_EVENT_HDR_SIZE),
					 len - HS_EVENT_HDR_SIZE, unwound,
					 /*
					  * An interpreter's stack: its native frames between
					  * the loop's runs (C calling back into it) are many,
					  * all kept, as deep as a BPF walk goes.
					  */
					 (ev->flags & HS_EVF_INTERP) ? HS_BPF_MAX_FRAMES :
					 trace_max_frames(t->opts.snip_pre, t->opts.snip_post),
					 &uflags, g);
		if (err < 0) {
			t->stats.bad_events++;
			return;
		}
		frames = unwound;
		n = (uint32_t)err;
		if (uflags & (UNWIND_CUT | UNWIND_DEPTH))
			evflags |= HS_EVF_TRUNCATED;
		if (uflags & UNWIND_FAULT)
			evflags |= HS_EVF_STACK_FAULT;
	}
	t->stats.allocs++;
	handle_alloc(t, c.p, ev, frames, n, evflags, g);
}

int trace__unwind_stats(const struct trace *t, struct unwind_stats *st, struct cfi_stats *cst)
{
	if (!t->unwinder)
		return -ENOENT;
	unwinder__stats(t->unwinder, st, cst);
	return 0;
}

int trace__event(struct trace *t, const void *data, size_t len, uint64_t seq)
{
	const struct hs_event *ev = data;

	t->seq = seq;
	/* A free is the header's first part only (HS_EVENT_FREE_SIZE). */
	if (len < HS_EVENT_FREE_SIZE ||
	    (ev->type != HS_EV_FREE && len < HS_EVENT_HDR_SIZE)) {
		t->stats.bad_events++;
		return 0;
	}
	if (t->opts.interp_record && ev->type != HS_EV_ALLOC && ev->type != HS_EV_FREE)
		t->opts.interp_record(t->opts.ictx, ev, len, seq);
	switch (ev->type) {
	case HS_EV_INTERP:
	case HS_EV_INTERP_CODE:
		/* Interpreter frames, a code object's last look: interp_record's. */
		if (!t->opts.interp_record)
			t->stats.bad_events++;
		break;
	case HS_EV_ALLOC:
		alloc_event(t, ev, len);
		break;
	case HS_EV_FREE:
		t->stats.frees++;
		release(t, trace__find_proc(t, (pid_t)ev->pid), ev->tid, ev->addr,
			ev->entry_pos ? (uint64_t)ev->entry_pos : UINT64_MAX);
		break;
	case HS_EV_EXIT:
		handle_exit(t, (pid_t)ev->pid);
		break;
	case HS_EV_EXEC:
		handle_exec(t, (pid_t)ev->pid);
		break;
	case HS_EV_FORK:
		/* -f: the child starts with its parent's mappings (a copy). */
		if (ev->size && trace__map_fork(t, (pid_t)ev->old_addr, (pid_t)ev->pid))
			t->stats.no_memory++;
		break;
	default:
		t->stats.bad_events++;
		break;
	}
	return 0;
}

struct frametab *trace__frames(const struct trace *t)
{
	return t->frames;
}

const struct trace_stats *trace__stats(const struct trace *t)
{
	return &t->stats;
}

static int by_live_bytes(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	uint64_t bx = x->live_estimate, by = y->live_estimate;

	if (bx != by)
		return bx < by ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t trace__reap(struct trace *t)
{
	size_t n = 0, gone = 0;
	struct proc **v = trace__procs(t, &n);

	for (size_t i = 0; v && i < n; i++) {
		pid_t pid = v[i]->pid;

		/* The pid is free: the process ended and its exit was lost. */
		if (!v[i]->gone && kill(pid, 0) && errno == ESRCH) {
			handle_exit(t, pid);
			gone++;
		}
	}
	free(v);
	t->stats.reaped += gone;
	return gone;
}

struct proc **trace__procs(const struct trace *t, size_t *n)
{
	size_t count = htab__count(t->procs), pos = 0;
	struct proc **v = malloc((count ? count : 1) * sizeof(*v)), *p;

	*n = 0;
	if (!v)
		return NULL;
	while ((p = htab__next(t->procs, &pos, NULL)))
		v[(*n)++] = p;
	qsort(v, *n, sizeof(*v), by_live_bytes);
	return v;
}

/* Sum @fn over every process. */
static uint64_t sum(const struct trace *t, uint64_t (*fn)(const struct proc *p))
{
	const struct proc *p;
	uint64_t s = 0;
	size_t pos = 0;

	while ((p = htab__next(t->procs, &pos, NULL)))
		s += fn(p);
	return s;
}

static uint64_t p_count(const struct proc *p) { return tracker__count(p->live); }
static uint64_t p_bytes(const struct proc *p) { return p->live_estimate; }
static uint64_t p_stacks(const struct proc *p) { return stacks__count(p->stacks); }
static uint64_t p_live_mem(const struct proc *p) { return tracker__memory(p->live); }
static uint64_t p_stack_mem(const struct proc *p) { return stacks__memory(p->stacks); }

size_t trace__live_count(const struct trace *t) { return (size_t)sum(t, p_count); }
uint64_t trace__live_bytes(const struct trace *t) { return sum(t, p_bytes); }
uint64_t trace__sample_bytes(const struct trace *t) { return t->opts.sample_bytes; }
size_t trace__stack_count(const struct trace *t) { return (size_t)sum(t, p_stacks); }
size_t trace__live_memory(const struct trace *t) { return (size_t)sum(t, p_live_mem); }
size_t trace__stack_memory(const struct trace *t) { return (size_t)sum(t, p_stack_mem); }

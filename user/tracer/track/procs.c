// SPDX-License-Identifier: MIT
/*
 * procs.c - the traced processes of a trace (see trace.h): found by pid
 * in a hash table (htab.h), one lookup per event whatever their number;
 * each one's mappings, read from /proc/PID/maps or built from the
 * kernel's mapping records (mmaprec.c); listed most live bytes first,
 * and summed for the status line and the accounting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "creators.h"
#include "frametab.h"
#include "htab.h"
#include "trace.h"
#include "trace_int.h"

void trace__free_proc(struct proc *p)
{
	mapset__retire(p->maps);	/* the unwinding pool may still read it */
	jit_names__free(p->jit);
	tracker__free(p->live);
	acct__fini(&p->acct);
	stack_tree__free(p->stacks);
	creators__free(p->creators);
	kept_stacks__free(p->kept);
	free(p);
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
void trace__remove_proc(struct trace *t, pid_t pid)
{
	struct proc *p = htab__delete(t->procs, pid_hash(pid), (uintptr_t)(uint32_t)pid);

	if (p)
		trace__free_proc(p);
	frametab__forget(t->frames, (uint32_t)pid);
}

void trace__read_maps(struct trace *t, struct proc *p)
{
	struct mapset *pm;

	if (p->gone)
		return;
	p->maps_read_ns = trace_now_ns();
	p->maps_read_seq = t->opts.ring_head ? t->opts.ring_head(t->opts.ctx) : t->seq;
	if (!p->comm[0] && proc_maps__comm(p->pid, p->comm, sizeof(p->comm)))
		p->comm[0] = '\0';
	if (proc_maps__load(p->pid, t->build_ids, &pm) == 0) {
		mapset__retire(p->maps);
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
	p->stacks = stack_tree__new();
	if (!p->live || !p->stacks || acct__init(&p->acct, p->stacks)) {
		trace__free_proc(p);
		return NULL;
	}
	if (htab__add(t->procs, pid_hash(pid), (uintptr_t)(uint32_t)pid, p)) {
		trace__free_proc(p);
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
		trace__read_maps(t, p);
	return p;
}

void trace__refresh_maps(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		trace__read_maps(t, p);
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
	if (p->maps && p->maps->pins) {
		/* Being read by the unwinding pool: changed in a copy. */
		struct mapset *c = mapset__clone(p->maps);

		if (!c)
			return -ENOMEM;
		mapset__retire(p->maps);
		p->maps = c;
	}
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
	mapset__retire(p->maps);
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
	mapset__retire(p->maps);
	p->maps = mapset__new(pid);
	return p->maps ? 0 : -ENOMEM;
}

void trace__set_comm(struct trace *t, pid_t pid, const char *comm)
{
	struct proc *p = trace__find_proc(t, pid);

	if (p)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

static int by_live_bytes(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	uint64_t bx = x->live_estimate, by = y->live_estimate;

	if (bx != by)
		return bx < by ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
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
static uint64_t p_stacks(const struct proc *p) { return stack_tree__count(p->stacks); }
static uint64_t p_live_mem(const struct proc *p) { return tracker__memory(p->live); }
static uint64_t p_stack_mem(const struct proc *p)
{
	return stack_tree__memory(p->stacks) + acct__memory(&p->acct);
}

size_t trace__live_count(const struct trace *t) { return (size_t)sum(t, p_count); }
uint64_t trace__live_bytes(const struct trace *t) { return sum(t, p_bytes); }
uint64_t trace__sample_bytes(const struct trace *t) { return t->opts.sample_bytes; }
size_t trace__stack_count(const struct trace *t) { return (size_t)sum(t, p_stacks); }
size_t trace__live_memory(const struct trace *t) { return (size_t)sum(t, p_live_mem); }
size_t trace__stack_memory(const struct trace *t)
{
	return (size_t)sum(t, p_stack_mem) + stack_cache__memory(t->cache);
}

void trace__stack_stats(const struct trace *t, struct trace_stack_stats *s)
{
	const struct proc *p;
	size_t pos = 0;

	*s = (struct trace_stack_stats){ 0 };
	while ((p = htab__next(t->procs, &pos, NULL))) {
		struct stack_tree_stats ts;

		stack_tree__stats(p->stacks, &ts);
		s->tree.stacks += ts.stacks;
		s->tree.nodes += ts.nodes;
		s->tree.frames += ts.frames;
		s->tree.arena_bytes += ts.arena_bytes;
		s->tree.used_bytes += ts.used_bytes;
		s->tree.index_slots += ts.index_slots;
		s->tree.index_used += ts.index_used;
		s->tree.index_bytes += ts.index_bytes;
		s->wide += acct__wide(&p->acct);
		s->snapshots += acct__snapshots(&p->acct);
		s->acct_bytes += acct__memory(&p->acct);
		s->snap_bytes += acct__snap_memory(&p->acct);
	}
	s->cache_bytes = stack_cache__memory(t->cache);
}

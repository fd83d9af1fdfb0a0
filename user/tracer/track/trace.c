// SPDX-License-Identifier: MIT
/*
 * trace.c - event handling (see trace.h): each ring buffer record into
 * its process's state, the live set (tracker.c), its unique stacks and
 * whole-run counts (acct.c), its stack unwound first if it carries one
 * (unwind/). The rules for what an event does to the live set are those
 * of include/heapsnoop/event.h: a realloc's old block is released only if
 * it was allocated before the realloc began. The processes themselves,
 * and their mappings, are procs.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "creators.h"
#include "frametab.h"
#include "htab.h"
#include "sampling.h"
#include "trace.h"
#include "trace_int.h"
#include "unwind/pool.h"
#include "unwind/procsrc.h"
#include "unwind/tails.h"

/* A new stack with an unmapped frame re-reads the maps at most this often. */
#define MAPS_REFRESH_NS 200000000ULL

struct trace *trace__new(const struct trace_opts *opts)
{
	struct trace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->opts = *opts;
	t->kept.budget = opts->keep_stacks;
	t->procs = htab__new(64, NULL, NULL);
	t->build_ids = buildid_cache__new();
	t->frames = frametab__new();
	t->cache = stack_cache__new();
	if (opts->unwind) {
		unsigned int max = trace_max_frames(opts->snip_pre, opts->snip_post, false);

		if (opts->unwind_threads &&
		    !unwind_pool__new(opts->unwind_threads, TRACE_POOL_DEPTH, max, &t->pool))
			t->unwinder = unwind_pool__own(t->pool);
		else
			t->unwinder = unwinder__new(&proc_cfi_src);
		t->unwound = malloc(max * sizeof(*t->unwound));
	}
	if (opts->interp_splice)
		t->spliced = calloc(TRACE_SPLICED_MAX, sizeof(*t->spliced));
	if (!t->procs || !t->build_ids || !t->frames || !t->cache ||
	    (opts->unwind && (!t->unwinder || !t->unwound)) ||
	    (opts->interp_splice && !t->spliced)) {
		trace__free(t);
		return NULL;
	}
	return t;
}

/* The oldest job back: what it pinned unpinned, a tail it made and no one took freed. */
static void job_done(struct trace *t)
{
	struct unwind_job *j = unwind_pool__oldest(t->pool);

	if (j->maps)
		mapset__unpin(j->maps);
	if (j->tail)
		tails__unpin(t->opts.tails, j->tail);
	free(j->res.built);
	j->res.built = NULL;
	unwind_pool__done(t->pool);
}

/* An allocation record's stack, or NULL when it is too short for one. */
static const struct hs_user_stack *user_stack(const struct hs_event *ev, size_t len)
{
	if (!(ev->flags & HS_EVF_USER_STACK) || len < HS_EVENT_HDR_SIZE + sizeof(struct hs_user_stack))
		return NULL;
	return (const void *)((const char *)ev + HS_EVENT_HDR_SIZE);
}

/*
 * The tail the record's copy stops at (tails.h), pinned; NULL: none, or
 * one no longer kept (the stack is then cut where the copy ends).
 */
static const struct unwind_tail *record_tail(struct trace *t, const struct hs_event *ev,
					     const struct hs_user_stack *us)
{
	if (!t->opts.tails || !us || !us->tail)
		return NULL;
	return tails__find(t->opts.tails, (pid_t)ev->pid, (pid_t)ev->tid, us->tail);
}

/*
 * Make a tail of this stack for the thread's next ones? Where the copy is
 * the whole stack (none of its tails was in place), and not where an
 * interpreter's frames are read (the registers they are found by are not
 * in a tail's check).
 */
static bool tail_wanted(const struct trace *t, const struct hs_event *ev,
			const struct hs_user_stack *us)
{
	return t->opts.tails && us && !us->tail && !(ev->flags & HS_EVF_INTERP);
}

/*
 * In turn, the record's thread noted (how old the tails it might name
 * are, how shallow its stacks go), and what the unwind says of its tail:
 * a new one, or none.
 */
static void tail_results(struct trace *t, const struct hs_event *ev,
			 const struct hs_user_stack *us, struct unwind_res *rs)
{
	if (!t->opts.tails || !us)
		return;
	tails__note(t->opts.tails, (pid_t)ev->pid, (pid_t)ev->tid, t->seq, us->regs[HS_UREG_SP],
		    !us->tail);
	if (rs->built) {
		tails__give(t->opts.tails, (pid_t)ev->pid, (pid_t)ev->tid, rs->built);
		rs->built = NULL;
	}
	if (rs->tail_missed)
		tails__withdraw(t->opts.tails, (pid_t)ev->pid, (pid_t)ev->tid);
}

/* Where a tail of this record's stack should start at the lowest. */
static uint64_t tail_hint(struct trace *t, const struct hs_event *ev)
{
	return t->opts.tails ? tails__hint(t->opts.tails, (pid_t)ev->pid, (pid_t)ev->tid) : 0;
}

/*
 * The job of the record of sequence @seq, done; NULL when it has none.
 * Older jobs are taken back on the way: records the session did not hand
 * over (heapsnoop's own dump writers' under -a).
 */
static struct unwind_job *take_job(struct trace *t, uint64_t seq)
{
	uint64_t s;

	while (t->pool && unwind_pool__oldest_seq(t->pool, &s)) {
		if (s == seq)
			return unwind_pool__oldest(t->pool);
		if (s > seq)
			break;
		job_done(t);
	}
	return NULL;
}

bool trace__ahead(struct trace *t, const void *data, size_t len, uint64_t seq)
{
	const struct hs_event *ev = data;
	struct unwind_job *j;
	struct proc *p;

	if (!t->pool || len < HS_EVENT_FREE_SIZE || ev->type == HS_EV_FREE)
		return true;
	if (len < HS_EVENT_HDR_SIZE)
		return true;	/* malformed: trace__event() counts it */
	switch (ev->type) {
	case HS_EV_ALLOC:
		break;
	case HS_EV_INTERP:
	case HS_EV_INTERP_CODE:
	case HS_EV_THREAD:
		/* A thread's creation is unwound in turn (thread_event): changes nothing ahead. */
		return true;
	default:
		/* An exec, exit or fork: what later records are unwound against changes. */
		return false;
	}
	if (!(ev->flags & HS_EVF_USER_STACK) || !ev->addr)
		return true;
	j = unwind_pool__next(t->pool);
	if (!j)
		return false;
	p = trace__add_proc(t, (pid_t)ev->pid);
	if (!p)
		return true;	/* trace__event() counts it, unwinding nothing */
	j->seq = seq;
	j->pid = (pid_t)ev->pid;
	j->us = (const void *)((const char *)ev + HS_EVENT_HDR_SIZE);
	j->len = len - HS_EVENT_HDR_SIZE;
	j->maps = p->maps;
	if (j->maps)
		mapset__pin(j->maps);
	/* Tails are given in turn, before any record can name one: known by now. */
	j->tail = record_tail(t, ev, user_stack(ev, len));
	j->build = tail_wanted(t, ev, user_stack(ev, len));
	j->hint = tail_hint(t, ev);
	if ((ev->flags & HS_EVF_INTERP) && t->opts.interp_grab &&
	    t->opts.interp_grab(t->opts.ictx, (pid_t)ev->pid, &j->grab.lo, &j->grab.hi))
		j->want_grab = true;
	unwind_pool__submit(t->pool, j);
	return true;
}

void trace__free(struct trace *t)
{
	if (!t)
		return;
	struct proc *p;
	size_t pos = 0;

	/* Every job back first: they pin their processes' mappings. */
	take_job(t, UINT64_MAX);
	while (t->procs && (p = htab__next(t->procs, &pos, NULL)))
		trace__free_proc(p);
	htab__free(t->procs);
	buildid_cache__free(t->build_ids);
	if (t->pool)
		unwind_pool__free(t->pool);
	else
		unwinder__free(t->unwinder);
	frametab__free(t->frames);
	stack_cache__free(t->cache);
	unwinder__free(t->creator_unwinder);
	free(t->creator_unwound);
	free(t->appended);
	free(t->spliced);
	free(t->unwound);
	free(t);
}

/* A new stack: make sure the process's maps cover its frames. */
static void check_coverage(struct trace *t, struct proc *p, const uint64_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		/* An interpreter's frame (records.h's synthetic address) is in none. */
		if ((p->maps && mapset__find(p->maps, frames[i])) || rec_is_frame_addr(frames[i]))
			continue;
		if (trace_now_ns() - p->maps_read_ns >= MAPS_REFRESH_NS)
			trace__read_maps(t, p);
		return;
	}
}

/*
 * The bytes a live block of @size, recorded at shed level @shed, stands
 * for: itself, or if sampled (--sample-bytes, shed load) its estimate.
 */
static uint64_t estimate(const struct trace *t, uint64_t size, uint32_t shed)
{
	uint64_t bytes;
	double count;

	if (!t->opts.sample_bytes && !shed)
		return size;
	sample_stands_for(size, t->opts.sample_bytes, hs_shed_mean(shed), &count, &bytes, NULL);
	return bytes;
}

/* @a is no longer live: freed by thread @tid, or replaced (!@freed). */
static void uncharge(struct trace *t, struct proc *p, const struct live_alloc *a, uint32_t tid,
		     bool freed)
{
	uint64_t bytes = estimate(t, a->size, a->shed);

	p->live_estimate -= bytes;
	acct__release(&p->acct, a->stack, tid, a->addr, bytes, freed);
	kept_stacks__drop(p->kept, a->addr);
}

/* --keep-stacks: the record's copy kept for its block at @addr, now live. */
static void keep_stack(struct trace *t, struct proc *p, uint64_t addr)
{
	if (!p->kept && !(p->kept = kept_stacks__new(&t->kept))) {
		t->kept.no_memory++;
		return;
	}
	kept_stacks__put(p->kept, addr, t->keep_us, t->keep_frames);
}

const struct kept_budget *trace__kept(const struct trace *t)
{
	return &t->kept;
}

/* After acct__reserve(). */
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

/*
 * A name that names a frame (a perf map's line, a jitdump's code or a
 * line of it), first kept: into the frame table, for the dumps.
 */
static int jit_kept(const struct jit_name *e, void *ctx)
{
	const struct jit_kept_ctx *c = ctx;
	int err = frametab__add_jit_line(c->t->frames, c->pid, e->start, e->end, e->name,
					 e->file, e->line, e->code);

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

void trace__retry_jit(struct trace *t, struct proc *only)
{
	size_t n = 0;
	struct proc **v = only ? NULL : trace__procs(t, &n);
	struct proc **each = only ? &only : v;

	for (size_t i = 0; i < (only ? 1 : n); i++) {
		struct proc *p = each[i];
		int named;

		if (!p->jit)
			continue;
		named = jit_names__retry(p->jit, jit_kept,
					 &(struct jit_kept_ctx){ t, (uint32_t)p->pid });
		if (named < 0)
			t->stats.no_memory++;
		else
			t->stats.jit_named += (uint64_t)named;
	}
	free(v);
}

/*
 * @p's stack of @n @frames, @flags: the cache's (a loop's stacks), else
 * its tree's, cached. False: out of memory.
 */
static bool intern(struct trace *t, struct proc *p, const uint64_t *frames, uint32_t n,
		   uint32_t flags, uint32_t *id, bool *created)
{
	uint64_t serial = stack_tree__serial(p->stacks), h = 0;

	*created = false;
	if (stack_cache__find(t->cache, serial, frames, n, flags, &h, id))
		return true;
	if (stack_tree__intern(p->stacks, frames, n, flags, id, created))
		return false;
	stack_cache__put(t->cache, serial, frames, n, flags, h, *id);
	return true;
}

/*
 * Does thread @tid of @p have a creator to append to a stack cut as
 * @flags says? Not to one cut short of its thread's start: the frames
 * after a boundary must be what called the thread's first frame.
 */
static bool creator_of(const struct proc *p, uint32_t tid, uint32_t flags)
{
	const uint64_t *cf;
	uint32_t cn, cflags;

	return p->creators && !(flags & (STACK_TRUNCATED | STACK_FAULT)) &&
	       !creators__get(p->creators, tid, &cf, &cn, &cflags);
}

/* @p's frame "[over the memory bound]" in *@addr (trace__collapse()); false: no memory. */
static bool over_mark(struct trace *t, struct proc *p, uint64_t *addr)
{
	return !frametab__intern(t->frames, (uint32_t)p->pid, TRACE_OVER_KIND, TRACE_OVER_FUNC,
				 NULL, 0, addr);
}

void trace__collapse(struct trace *t, bool on)
{
	t->collapse = on;
}

/* The boundary frame of @p (frametab.h's FRAMETAB_CREATOR_*); 0: none (no memory). */
static uint64_t creator_mark(struct trace *t, struct proc *p)
{
	if (!p->created_by &&
	    frametab__intern(t->frames, (uint32_t)p->pid, FRAMETAB_CREATOR_KIND,
			     FRAMETAB_CREATOR_FUNC, NULL, 0, &p->created_by))
		p->created_by = 0;
	return p->created_by;
}

/*
 * Thread @tid of @p has a creator: *@frames (@n of them, which reached the
 * thread's start) with the boundary frame and the creator's chain after
 * them, in t->appended, at most REC_MAX_DEPTH (then cut=depth), its cut
 * flags added to *@flags and, where the chain reaches the first thread's
 * start, its last @snip_post frames left off (--snip-post, of the whole
 * stack). Returns the frames' count; @n as it was when nothing could be
 * appended (no memory: counted).
 */
static uint32_t append_creator(struct trace *t, struct proc *p, uint32_t tid,
			       const uint64_t **frames, uint32_t n, uint32_t *flags,
			       uint32_t snip_post)
{
	uint64_t mark = creator_mark(t, p);
	const uint64_t *cf;
	uint32_t cn, cflags, k;

	if (!t->appended)
		t->appended = malloc(REC_MAX_DEPTH * sizeof(*t->appended));
	if (!mark || !t->appended || creators__get(p->creators, tid, &cf, &cn, &cflags)) {
		t->stats.no_memory++;
		return n;
	}
	if (!cflags && snip_post < cn)
		cn -= snip_post;
	k = n < REC_MAX_DEPTH ? n : REC_MAX_DEPTH;
	memmove(t->appended, *frames, k * sizeof(*t->appended));
	if (k < REC_MAX_DEPTH)
		t->appended[k++] = mark;
	for (uint32_t i = 0; i < cn && k < REC_MAX_DEPTH; i++)
		t->appended[k++] = cf[i];
	if (n + 1 + cn > REC_MAX_DEPTH)
		*flags |= STACK_TRUNCATED;
	else
		*flags |= cflags;
	*frames = t->appended;
	return k;
}

/*
 * An allocation of process @p with @n frames (walked by BPF, or unwound
 * here) and @evflags (HS_EVF_*); @grab: the registers of the native frame
 * the interpreter hooks asked for (NULL: none).
 */
static void handle_alloc(struct trace *t, struct proc *p, const struct hs_event *ev,
			 const uint64_t *frames, uint32_t n, uint32_t evflags,
			 const struct unwind_grab *grab)
{
	uint32_t flags = 0, id, shed = (evflags & HS_EVF_SHED_MASK) >> HS_EVF_SHED_SHIFT;
	struct live_alloc a, old;
	bool created;
	uint64_t est, over;
	int replaced;

	if (shed > HS_SHED_LEVELS) {
		t->stats.bad_events++;
		return;
	}
	if (evflags & HS_EVF_TRUNCATED)
		flags |= STACK_TRUNCATED;
	if (evflags & HS_EVF_STACK_FAULT)
		flags |= STACK_FAULT;
	/* --snip-pre/--snip-post, then keep the innermost REC_MAX_DEPTH. */
	if (t->opts.snip_pre < n) {
		frames += t->opts.snip_pre;
		n -= t->opts.snip_pre;
	}
	/* A thread with a creator: the snip is of the creator's end (append_creator). */
	if (!(flags & STACK_TRUNCATED) && t->opts.snip_post < n && !creator_of(p, ev->tid, flags))
		n -= t->opts.snip_post;
	if (t->opts.interp_splice) {
		uint32_t iflags;

		n = t->opts.interp_splice(t->opts.ictx, ev, t->seq, frames, n,
					  flags & (STACK_TRUNCATED | STACK_FAULT), grab, t->spliced,
					  TRACE_SPLICED_MAX, &iflags);
		frames = t->spliced;
		flags |= iflags;
	}
	if (creator_of(p, ev->tid, flags))
		n = append_creator(t, p, ev->tid, &frames, n, &flags, t->opts.snip_post);
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
	/* Over the agent's bound: one stack for every new allocation (trace__collapse()). */
	if (t->collapse && over_mark(t, p, &over)) {
		frames = &over;
		n = 1;
		flags = 0;
		t->stats.collapsed++;
	}
	if (!intern(t, p, frames, n, flags, &id, &created) || acct__reserve(&p->acct)) {
		t->stats.no_memory++;
		return;
	}
	if (!t->opts.map_records && !(evflags & HS_EVF_USER_STACK) && created)
		check_coverage(t, p, frames, n);
	if (created && !t->opts.no_jit_names)
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
	a = (struct live_alloc){ .addr = ev->addr, .seq = t->seq, .stack = id,
				 .size = ev->size < LIVE_SIZE_MAX ? ev->size : LIVE_SIZE_MAX,
				 .shed = shed };
	if (shed) {
		t->stats.shed_kept++;
		p->shed_kept++;
	}
	if (tracker__alloc(p->live, &a, &old, &replaced)) {
		t->stats.no_memory++;
		return;
	}
	if (replaced) {
		t->stats.missed_frees++;
		uncharge(t, p, &old, 0, false);
	}
	if (t->keep_us)
		keep_stack(t, p, ev->addr);
	est = estimate(t, a.size, a.shed);
	p->live_estimate += est;
	if (acct__alloc(&p->acct, id, ev->tid, ev->addr, est, tracker__count(p->live),
			p->live_estimate))
		acct__peak_time(&p->acct, trace_now_ns());
}

/* The process ended: to on_exit (its leaks, its peak), then forget it. */
static void handle_exit(struct trace *t, pid_t pid)
{
	struct proc *p = trace__find_proc(t, pid);

	if (t->opts.tails)
		tails__forget(t->opts.tails, pid);
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
	trace__remove_proc(t, pid);
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
	struct stack_tree *stacks;
	struct acct acct;

	if (!p)
		return;
	live = tracker__new();
	stacks = stack_tree__new();
	if (!live || !stacks || acct__init(&acct, stacks)) {
		tracker__free(live);
		stack_tree__free(stacks);
		t->stats.no_memory++;
		return;
	}
	t->stats.execs++;
	t->stats.exit_live += tracker__count(p->live);
	t->stats.exit_bytes += p->live_estimate;
	tracker__free(p->live);
	acct__fini(&p->acct);
	stack_tree__free(p->stacks);
	frametab__forget(t->frames, (uint32_t)pid);
	p->live = live;
	p->stacks = stacks;
	p->acct = acct;	/* the new image's counts start from nothing */
	p->live_estimate = 0;
	p->shed_kept = 0;	/* ... its samples too: the old image's were its own */
	kept_stacks__free(p->kept);
	p->kept = NULL;
	jit_names__free(p->jit);
	p->jit = NULL;
	/* The old image's threads are gone, and its frames (the boundary's too). */
	creators__free(p->creators);
	p->creators = NULL;
	p->created_by = 0;
	if (!t->opts.map_records) {
		p->comm[0] = '\0';
		trace__read_maps(t, p);
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
		trace__read_maps(c->t, c->p);
	return c->p->maps;
}

/* An allocation record: its frames, walked by BPF or to unwind here. */
static void alloc_event(struct trace *t, const struct hs_event *ev, size_t len)
{
	const uint64_t *frames = (const uint64_t *)ev->frames;
	struct unwind_ctx c = { .t = t };
	uint32_t evflags = ev->flags, uflags, n = ev->nr_frames;
	struct unwind_grab grab = { 0 }, *g = NULL;

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
		struct unwind_job *j = take_job(t, t->seq);
		const struct hs_user_stack *us = user_stack(ev, len);
		struct unwind_res rs;

		tracker__prefetch(c.p->live, ev->addr);
		if (j && !j->stale) {
			/* Unwound on the pool: the same walk, done ahead. */
			if (j->want_grab) {
				grab = j->grab;
				g = &grab;
			}
			rs = j->res;
			j->res.built = NULL;
			frames = j->frames;
		} else {
			const struct unwind_tail *tail = record_tail(t, ev, us);
			struct unwind_req rq = {
				.pid = (pid_t)ev->pid, .maps = unwind_maps, .ctx = &c,
				.us = (const void *)((const char *)ev + HS_EVENT_HDR_SIZE),
				.len = len - HS_EVENT_HDR_SIZE, .frames = t->unwound,
				.max = trace_max_frames(t->opts.snip_pre, t->opts.snip_post, false),
				.tail = tail, .build = tail_wanted(t, ev, us),
				.hint = tail_hint(t, ev),
			};

			/* An interpreter's loop keeps the running function's position in a register. */
			if ((ev->flags & HS_EVF_INTERP) && t->opts.interp_grab &&
			    t->opts.interp_grab(t->opts.ictx, (pid_t)ev->pid, &grab.lo, &grab.hi))
				rq.grab = g = &grab;
			unwind__run(t->unwinder, &rq, &rs);
			if (tail)
				tails__unpin(t->opts.tails, tail);
			frames = t->unwound;
		}
		if (rs.n < 0) {
			t->stats.bad_events++;
			free(rs.built);
			if (j)
				job_done(t);
			return;
		}
		tail_results(t, ev, us, &rs);
		n = (uint32_t)rs.n;
		uflags = rs.flags;
		if (uflags & (UNWIND_CUT | UNWIND_DEPTH))
			evflags |= HS_EVF_TRUNCATED;
		/* The unwinder's cuts at the copy's end: these the ring's, not --stack-copy's. */
		if ((ev->flags & HS_EVF_SHORT_COPY) && (uflags & UNWIND_CUT))
			t->stats.short_cut++;
		if (uflags & UNWIND_FAULT)
			evflags |= HS_EVF_STACK_FAULT;
		/*
		 * --keep-stacks: its copy, for heapdecode to unwind again; not
		 * where interpreter frames go among the native ones (which of
		 * the record's frames the copy gave would not be known).
		 */
		if (t->kept.budget && (ev->flags & HS_EVF_INTERP))
			t->kept.interp++;
		else if (t->kept.budget && us && !us->tail)
			t->keep_us = us;
		t->keep_frames = n;
	}
	t->stats.allocs++;
	handle_alloc(t, c.p, ev, frames, n, evflags, g);
	t->keep_us = NULL;
	/* Its frames were the job's: given back once handled. */
	if (take_job(t, t->seq))
		job_done(t);
}

/*
 * The unwinder of threads' creations and its frames, one of their own in
 * both modes: with --unwind fp there is no other (the frame-pointer walk
 * cannot cross the C library's clone3 and pthread_create:
 * bpf/creator.h), and dwarf's counts only allocations' stacks (-v's
 * frames not recovered: a walk from clone3's system call stops at once
 * before leaf_caller() takes it on). NULL: no memory.
 */
static struct unwinder *creator_unwinder(struct trace *t)
{
	if (!t->creator_unwound)
		t->creator_unwound = malloc(REC_MAX_DEPTH * sizeof(*t->creator_unwound));
	if (!t->creator_unwinder)
		t->creator_unwinder = unwinder__new(&proc_cfi_src);
	return t->creator_unwound ? t->creator_unwinder : NULL;
}

/*
 * The C library's clone wrappers are leaves, and a walk from their system
 * call stops at once: glibc's x86-64 clone3 ends its FDE before the
 * syscall instruction (the child comes back on another stack); arm64's
 * FDE covers the svc but keeps the return address in x30, which the
 * record's registers (enum hs_ureg) do not hold, so the step finds the
 * CFA at the stack pointer and fails. There the wrapper pushed nothing:
 * its caller's registers are its own but for the return address, on
 * x86-64 the word at the stack pointer, on arm64 the link register
 * (@lr: the record's @old_addr, bpf/creator.h; never signed: bl does not
 * sign, a non-leaf signs its own copy). A copy of @us (@len bytes) whose
 * registers are the caller's, as that rule says, its stack bytes the same
 * (@skip keeps their base); NULL where the rule cannot be applied (no
 * link register; a copy that does not hold the word) or no memory.
 */
static struct hs_user_stack *leaf_caller(const struct hs_user_stack *us, size_t len, uint64_t lr)
{
	struct hs_user_stack *c;
#if defined(__x86_64__)
	uint64_t ra;

	(void)lr;
	if (len < sizeof(*us) || us->size > len - sizeof(*us) || us->holes ||
	    us->skip + 8 > us->size || us->skip + 8 >= HS_PAGE_SIZE || us->want < 8)
		return NULL;
	memcpy(&ra, us->data + us->skip, sizeof(ra));
	c = malloc(len);
	if (!c)
		return NULL;
	memcpy(c, us, len);
	c->regs[HS_UREG_IP] = ra;
	c->regs[HS_UREG_SP] += 8;
	c->skip += 8;
	c->want -= 8;
	return c;
#elif defined(__aarch64__)
	if (len < sizeof(*us) || us->size > len - sizeof(*us) || !lr)
		return NULL;
	c = malloc(len);
	if (!c)
		return NULL;
	memcpy(c, us, len);
	c->regs[HS_UREG_IP] = lr;
	return c;
#else
	(void)us;
	(void)len;
	(void)lr;
	(void)c;
	return NULL;
#endif
}

/*
 * HS_EV_THREAD: thread @ev->tid made thread @ev->addr. Its stack in the
 * clone call unwound (through clone3 and pthread_create to their caller),
 * its own creator after it, kept as the new thread's (creators.c).
 */
static void thread_event(struct trace *t, const struct hs_event *ev, size_t len)
{
	const struct hs_user_stack *us = user_stack(ev, len);
	struct unwind_ctx c = { .t = t };
	struct unwinder *u = creator_unwinder(t);
	const uint64_t *frames;
	struct unwind_res rs;
	uint32_t n, flags = 0;
	int err;

	t->stats.threads_created++;
	if (!us || !ev->addr || ev->addr > UINT32_MAX) {
		t->stats.bad_events++;
		t->stats.creators_dropped++;
		return;
	}
	c.p = trace__add_proc(t, (pid_t)ev->pid);
	if (!u || !c.p || (!c.p->creators && !(c.p->creators = creators__new()))) {
		t->stats.no_memory++;
		t->stats.creators_dropped++;
		return;
	}
	unwind__run(u, &(struct unwind_req){
			.pid = (pid_t)ev->pid, .maps = unwind_maps, .ctx = &c, .us = us,
			.len = len - HS_EVENT_HDR_SIZE, .frames = t->creator_unwound,
			.max = REC_MAX_DEPTH }, &rs);
	free(rs.built);
	/* No step past the system call: the wrapper as a leaf, its own frame first. */
	if (rs.n == 1 && (rs.flags & UNWIND_FAULT)) {
		struct hs_user_stack *lc = leaf_caller(us, len - HS_EVENT_HDR_SIZE,
							 ev->old_addr);
		struct unwind_res lr;

		if (lc) {
			unwind__run(u, &(struct unwind_req){
					.pid = (pid_t)ev->pid, .maps = unwind_maps, .ctx = &c,
					.us = lc, .len = len - HS_EVENT_HDR_SIZE,
					.frames = t->creator_unwound + 1, .max = REC_MAX_DEPTH - 1 },
				    &lr);
			free(lr.built);
			if (lr.n > 0) {
				rs.n = lr.n + 1;
				rs.flags = lr.flags;
			}
			free(lc);
		}
	}
	if (rs.n <= 0) {
		t->stats.bad_events++;
		t->stats.creators_dropped++;
		return;
	}
	n = (uint32_t)rs.n;
	if (rs.flags & (UNWIND_CUT | UNWIND_DEPTH))
		flags |= STACK_TRUNCATED;
	if (rs.flags & UNWIND_FAULT)
		flags |= STACK_FAULT;
	frames = t->creator_unwound;
	/* The creating thread's own creator: recursive to the first thread. */
	if (creator_of(c.p, ev->tid, flags))
		n = append_creator(t, c.p, ev->tid, &frames, n, &flags, 0);
	err = creators__set(c.p->creators, (uint32_t)ev->addr, frames, n, flags);
	if (err == -ENOMEM)
		t->stats.no_memory++;
	if (err)
		t->stats.creators_dropped++;
}

int trace__unwind_stats(const struct trace *t, struct unwind_stats *st, struct cfi_stats *cst)
{
	if (t->pool)
		unwind_pool__stats(t->pool, st, cst);
	else if (t->unwinder)
		unwinder__stats(t->unwinder, st, cst);
	else
		return -ENOENT;
	/* The ring's cuts apart from --stack-copy's (the unwinder counts both as cut). */
	st->short_cut = t->stats.short_cut < st->cut ? t->stats.short_cut : st->cut;
	st->cut -= st->short_cut;
	return 0;
}

int trace__pool_share(const struct trace *t, unsigned int *threads, uint64_t *stacks)
{
	if (!t->pool)
		return -ENOENT;
	unwind_pool__share(t->pool, threads, stacks);
	return 0;
}

int trace__event(struct trace *t, const void *data, size_t len, uint64_t seq)
{
	const struct hs_event *ev = data;
	struct proc *p;

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
		p = trace__find_proc(t, (pid_t)ev->pid);
		if (p && acct__reserve(&p->acct))
			t->stats.no_memory++;
		else
			release(t, p, ev->tid, ev->addr,
				ev->entry_pos ? (uint64_t)ev->entry_pos : UINT64_MAX);
		break;
	case HS_EV_EXIT:
		handle_exit(t, (pid_t)ev->pid);
		break;
	case HS_EV_EXEC:
		handle_exec(t, (pid_t)ev->pid);
		break;
	case HS_EV_THREAD:
		thread_event(t, ev, len);
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

/* SPDX-License-Identifier: MIT */
/*
 * trace_int.h - what trace.c (events) and procs.c (the processes, their
 * mappings) share of a trace: the struct, and the steps procs.c offers
 * the event handling.
 */
#ifndef HEAPSNOOP_TRACE_INT_H
#define HEAPSNOOP_TRACE_INT_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "heapsnoop/interpframe.h"
#include "stackcache.h"
#include "trace.h"

struct trace {
	struct trace_opts opts;
	struct trace_stats stats;
	struct htab *procs;	/* pid -> struct proc */
	struct buildid_cache *build_ids;
	struct unwinder *unwinder;	/* opts.unwind: the loop's own (the pool's, with one) */
	struct unwind_pool *pool;	/* opts.unwind_threads */
	uint64_t *unwound;	/* ... a stack it unwound (trace_max_frames()) */
	uint64_t seq;		/* the record being handled's (trace__event) */
	uint64_t *spliced;	/* interpreter frames among the native ones */
	struct frametab *frames;	/* frames that are not native code */
	struct stack_cache *cache;	/* the stacks interned last */
	/*
	 * Threads' creators (creators.c): the unwinder of their records (in
	 * both modes: trace.c's creator_unwinder()), the frames it unwinds,
	 * and a stack with its creator's appended (REC_MAX_DEPTH each). Made
	 * at the first HS_EV_THREAD.
	 */
	struct unwinder *creator_unwinder;
	uint64_t *creator_unwound, *appended;
	/*
	 * --keep-stacks: the budget of every process's copies, and the
	 * record being handled's copy to keep once its block is live (its
	 * frames the online unwind gave); NULL: none.
	 */
	struct kept_budget kept;
	const struct hs_user_stack *keep_us;
	uint32_t keep_frames;
	bool collapse;		/* trace__collapse(): new allocations under one stack */
};

/* Unwinding jobs in flight at most: records looked at ahead (unwind/pool.h). */
#define TRACE_POOL_DEPTH 256

/* Frames an allocation's stack has at most with its interpreter frames. */
#define TRACE_SPLICED_MAX (REC_MAX_DEPTH + HS_INTERP_MAX_FRAMES)

/* CLOCK_MONOTONIC now, ns: when maps were read, when a peak was reached. */
static inline uint64_t trace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * procs.c: (re-)read @p's mappings and name from /proc, unless it is
 * gone, noting when (maps_read_ns) and up to which record (maps_read_seq);
 * @pid's process out of the table and freed; one process freed.
 */
void trace__read_maps(struct trace *t, struct proc *p);
void trace__remove_proc(struct trace *t, pid_t pid);
void trace__free_proc(struct proc *p);

#endif /* HEAPSNOOP_TRACE_INT_H */

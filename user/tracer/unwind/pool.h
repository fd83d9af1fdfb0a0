/* SPDX-License-Identifier: MIT */
/*
 * pool.h - allocations' stacks unwound on a pool of threads, handed back
 * in the order they were given (docs/DESIGN.md, "A loader that scales
 * with the cores").
 *
 * The loop gives each allocation record with a stack to unwind a job as
 * it looks ahead in the ring buffer (stream/reader.h), and takes the jobs
 * back one by one as it handles the records in order; everything else of
 * a record (its process's tables, the live set, the output) stays on the
 * loop's thread. Unwinding is most of the loader's work, and most of that
 * is waiting on memory (the stack copies were written by other CPUs), so
 * threads that each wait on their own record take N times the records.
 *
 * A job reads only what it is given: the record in the ring (given back
 * to the producer only after the loop took the job), the process's
 * mappings (pinned, mapset.h), and its thread's own unwinder (its CFI
 * tables and caches: libdw's handles are not shared between threads). A
 * job whose walk needed mappings newer than it was given (an address in
 * none of them) says so, and the loop unwinds that record again itself.
 * The loop's thread runs a job itself when no thread has taken it yet.
 */
#ifndef HEAPSNOOP_POOL_H
#define HEAPSNOOP_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"

struct unwind_pool;

struct unwind_job {
	/* Given (the loop's thread fills them, then unwind_pool__submit()). */
	uint64_t seq;			/* the record's, to find it again */
	pid_t pid;
	const struct hs_user_stack *us;	/* the record's stack, in the ring */
	size_t len;			/* its bytes */
	struct mapset *maps;		/* pinned by the loop; NULL: none */
	bool want_grab;			/* grab.lo, grab.hi set */
	const struct unwind_tail *tail;	/* the record's (pinned: tails.h); NULL: none */
	bool build;			/* a tail of this stack wanted (unwind_req.build) */
	uint64_t hint;			/* ... starting there at the lowest (unwind_req.hint) */
	/* Taken back (unwind_pool__oldest()). */
	uint64_t *frames;		/* the job's own: max_frames of them */
	struct unwind_res res;		/* frames (res.n), flags, the tail's fate */
	bool stale;			/* mappings newer than @maps were needed */
	struct unwind_grab grab;
	/* The pool's. */
	uint32_t state;
	uint32_t waiter;
};

/*
 * A pool of @threads threads (0: the loop's thread runs every job) with
 * room for @depth jobs in flight, each unwinding at most @max_frames
 * frames. Returns 0 and *@out, or -errno (-ENOMEM, pthread_create's).
 */
int unwind_pool__new(unsigned int threads, unsigned int depth, unsigned int max_frames,
		     struct unwind_pool **out);

/*
 * The next job to fill, or NULL when @depth are in flight (take one back
 * first). Its given fields are the caller's to set.
 */
struct unwind_job *unwind_pool__next(struct unwind_pool *p);

/* Start the job unwind_pool__next() gave. */
void unwind_pool__submit(struct unwind_pool *p, struct unwind_job *j);

/*
 * The oldest job in flight, its results ready: run here if no thread took
 * it, else waited for. NULL when none is in flight. It stays the oldest
 * until unwind_pool__done().
 */
struct unwind_job *unwind_pool__oldest(struct unwind_pool *p);

/* The oldest job's seq without waiting for it; false when none is in flight. */
bool unwind_pool__oldest_seq(const struct unwind_pool *p, uint64_t *seq);

/* The oldest job is done with: its slot back for a new one. */
void unwind_pool__done(struct unwind_pool *p);

/* Jobs in flight now. */
unsigned int unwind_pool__in_flight(const struct unwind_pool *p);

/*
 * The unwinder of the loop's thread, for what it unwinds itself (a job
 * that needed newer mappings, a record no job was given).
 */
struct unwinder *unwind_pool__own(struct unwind_pool *p);

/*
 * Every thread's counts summed, and their CFI tables' (-v): call when no
 * job is in flight.
 */
void unwind_pool__stats(const struct unwind_pool *p, struct unwind_stats *st,
			struct cfi_stats *cst);

/*
 * The pool's threads beside the loop's, into *@threads, and how many of
 * the stacks counted by unwind_pool__stats() they unwound, into
 * *@stacks (the rest the loop's thread ran itself, or unwound again with
 * newer mappings).
 */
void unwind_pool__share(const struct unwind_pool *p, unsigned int *threads, uint64_t *stacks);

/* The threads ended (jobs in flight are run first); NULL: nothing. */
void unwind_pool__free(struct unwind_pool *p);

#endif /* HEAPSNOOP_POOL_H */

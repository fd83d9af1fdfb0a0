/* SPDX-License-Identifier: MIT */
/*
 * acct.h - a process's whole-run accounting, from the moment tracing
 * began: allocations, bytes allocated, frees, temporary allocations, and
 * the peak of its live bytes (when, and what each stack held then).
 * Written as `proc` and `stack` records (docs/OUTPUT.md) by dump.c.
 *
 * Temporary is heaptrack's definition: an allocation freed with no other
 * allocation by the same thread in between (the thread that frees it:
 * its last allocation is this one). One small entry per thread ever seen.
 *
 * A stack's counts live in its node of the process's tree (stacktree.h's
 * payload, 8 bytes): calls and frees up to 255, temporary allocations up
 * to 127, bytes asked for up to 4 MiB - 1 and live up to 64 KiB - 1, no
 * block replaced unseen (its live count is its calls less its frees); a
 * stack past any of these has its counts in a table of whole ones (64
 * bytes) for good, the node keeping their index. Two marks beside them say what the last
 * written record of the stack lacks.
 *
 * At-peak values are exact without replaying events: a new peak only
 * bumps the process's peak generation and empties a table of snapshots;
 * a stack's live values are copied into it the first time they change
 * after that, so a stack not in it holds its at-peak values as its live
 * ones (acct__counts). The snapshots are of the stacks changed since the
 * peak, each once, 8 bytes (its id, and its blocks to 1022 and bytes to
 * 4 MiB - 1 in a word: a stack past them is past its node's counts, and
 * keeps them in its whole counts): none while a process's heap grows.
 */
#ifndef HEAPSNOOP_ACCT_H
#define HEAPSNOOP_ACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktree.h"

struct htab;
struct acct_thread;
struct acct_wide;
struct acct_snap;

/* A stack's whole-run values, whole. */
struct acct_counts {
	uint64_t allocs, alloc_bytes;	/* calls and bytes asked for */
	uint64_t frees, temporary;
	uint64_t live_count, live_bytes;
	uint64_t peak_count, peak_bytes;	/* what it held at its process's peak */
};

struct acct {
	uint64_t allocs, alloc_bytes;	/* calls and bytes asked for */
	uint64_t frees, temporary;
	uint64_t peak_bytes, peak_count;	/* live at the peak */
	uint64_t peak_ns;		/* CLOCK_MONOTONIC ns of the peak */
	uint64_t peak_gen;		/* bumped at each new peak (from 1) */
	uint64_t written_gen;		/* ... when the stacks' records were last written */
	bool dirty;			/* changed since last written */
	uint64_t sample_count, sample_bytes;	/* last `sample` written */
	struct htab *threads;		/* tid -> struct acct_thread */
	uint32_t last_tid;		/* a one-entry cache of @threads */
	struct acct_thread *last;
	struct stack_tree *tree;	/* the stacks, each its small counts */
	struct acct_wide *wide;		/* the whole counts of the stacks past them */
	uint32_t nwide, wide_cap;
	struct acct_snap *snaps;	/* at-peak values of the stacks changed since */
	uint32_t nsnaps, snaps_cap;
};

/*
 * Empty accounting of the stacks of @tree (which outlives it); 0 or
 * -ENOMEM. acct__fini frees what it holds.
 */
int acct__init(struct acct *a, struct stack_tree *tree);
void acct__fini(struct acct *a);

/*
 * Room for one event's changes (snapshots, stacks' whole counts: a
 * realloc's old block released, a block replaced, the new one charged),
 * before anything is changed: then its acct__alloc() and
 * acct__release() cannot fail. Returns 0 or -ENOMEM (the event is to be
 * dropped).
 */
int acct__reserve(struct acct *a);

/*
 * Thread @tid allocated @size bytes at @addr, charged to stack @id of
 * the tree; the process now holds @live_count blocks and @live_bytes
 * bytes (this one included). Call after the live table took it and
 * acct__reserve(). A thread entry it cannot allocate costs only the
 * temporary count of that thread. Returns true if this is a new peak
 * (live bytes): the caller then says when, acct__peak_time(), so that
 * the clock is read only at a new peak, not at every allocation.
 */
bool acct__alloc(struct acct *a, uint32_t id, uint32_t tid, uint64_t addr, uint64_t size,
		 uint64_t live_count, uint64_t live_bytes);

/* The peak acct__alloc() just reported was reached at @ts_ns (CLOCK_MONOTONIC). */
void acct__peak_time(struct acct *a, uint64_t ts_ns);

/*
 * The block of @size bytes at @addr, charged to stack @id, is no longer
 * live: freed by thread @tid (@freed), or replaced by a new block at the
 * same address whose free was never seen (!@freed, @tid ignored). After
 * acct__reserve().
 */
void acct__release(struct acct *a, uint32_t id, uint32_t tid, uint64_t addr, uint64_t size,
		   bool freed);

/* Stack @id's values now, its at-peak ones among them. */
void acct__counts(const struct acct *a, uint32_t id, struct acct_counts *c);

/*
 * Does stack @id have values (counts, or at-peak values) its last
 * written `stack` record lacks? A stack never charged has none.
 */
bool acct__changed(const struct acct *a, uint32_t id);

/*
 * Stack @id's record was written now (or is, by a dump's child: the
 * marks are the parent's). Once every changed stack is,
 * acct__all_written().
 */
void acct__written(struct acct *a, uint32_t id);
void acct__all_written(struct acct *a);

/* Bytes beside the tree: the whole counts, the snapshots; the snapshots' alone. */
size_t acct__memory(const struct acct *a);
size_t acct__snap_memory(const struct acct *a);
/* How many stacks have whole counts, and snapshots now. */
uint32_t acct__wide(const struct acct *a);
uint32_t acct__snapshots(const struct acct *a);

#endif /* HEAPSNOOP_ACCT_H */

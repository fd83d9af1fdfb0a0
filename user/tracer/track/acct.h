/* SPDX-License-Identifier: MIT */
/*
 * acct.h - a process's whole-run accounting, from the moment tracing
 * began: allocations, bytes allocated, frees, temporary allocations, and
 * the peak of its live bytes (when, and what each stack held then).
 * Written as `proc` and `stack` records (docs/OUTPUT.md) by report.c.
 *
 * Temporary is heaptrack's definition: an allocation freed with no other
 * allocation by the same thread in between (the thread that frees it:
 * its last allocation is this one). One small entry per thread ever seen.
 *
 * At-peak values are exact without replaying events: a new peak only
 * bumps the process's peak generation; a stack's live values are copied
 * aside the first time they change after that (acct.c's touch()), so a
 * stack untouched since the peak still holds its at-peak values as its
 * live ones (acct__at_peak).
 *
 * What only the tracer keeps of a stack (when its at-peak values were
 * taken, what the last dump wrote of it) is here, by stack id, not in
 * struct stack, which heapdecode shares (stacks.h).
 */
#ifndef HEAPSNOOP_ACCT_H
#define HEAPSNOOP_ACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacks.h"

struct htab;

/* One stack's marks, beside its counts in struct stack. */
struct acct_stack {
	uint32_t peak_gen;	/* the peak generation when its peak_* were taken */
	bool dirty;		/* changed since last written */
	uint64_t written_peak_bytes, written_peak_count;	/* as last written */
};

struct acct {
	uint64_t allocs, alloc_bytes;	/* calls and bytes asked for */
	uint64_t frees, temporary;
	uint64_t peak_bytes, peak_count;	/* live at the peak */
	uint64_t peak_ns;		/* CLOCK_MONOTONIC ns of the peak */
	uint32_t peak_gen;		/* bumped at each new peak */
	bool dirty;			/* changed since last written */
	uint64_t sample_count, sample_bytes;	/* last `sample` written */
	struct htab *threads;		/* tid -> struct acct_thread */
	uint32_t last_tid;		/* a one-entry cache of @threads */
	struct acct_thread *last;
	struct acct_stack *stacks;	/* by stack id, nstacks of them (zeroed) */
	uint32_t nstacks;
};

/* Empty accounting; 0 or -ENOMEM. acct__fini frees what it holds. */
int acct__init(struct acct *a);
void acct__fini(struct acct *a);

/* acct__reserve()'s slow path: the marks doubled (zeroed) past @id. 0 or -ENOMEM. */
int acct__grow(struct acct *a, uint32_t id);

/*
 * Room for the marks of stack @id (stacks__intern()'s ids count up from
 * 0), before anything is charged to it: a compare at every allocation,
 * the array grown (acct__grow) only for a new stack. Returns 0 or
 * -ENOMEM.
 */
static inline int acct__reserve(struct acct *a, uint32_t id)
{
	return id < a->nstacks ? 0 : acct__grow(a, id);
}

/* Stack @id's marks; NULL if nothing was ever reserved for it. */
struct acct_stack *acct__stack(const struct acct *a, uint32_t id);

/* Bytes the marks of the stacks take (beside stacks__memory()). */
size_t acct__stack_memory(const struct acct *a);

/*
 * Thread @tid allocated @size bytes at @addr, charged to stack @s of id
 * @id (reserved: acct__reserve()); the process now holds @live_count
 * blocks and @live_bytes bytes (this one included). Call after the live
 * table took it. Never fails: a thread entry it cannot allocate costs
 * only the temporary count of that thread.
 * Returns true if this is a new peak (live bytes): the caller then says
 * when, acct__peak_time(), so that the clock is read only at a new peak,
 * not at every allocation.
 */
bool acct__alloc(struct acct *a, struct stack *s, uint32_t id, uint32_t tid, uint64_t addr,
		 uint64_t size, uint64_t live_count, uint64_t live_bytes);

/* The peak acct__alloc() just reported was reached at @ts_ns (CLOCK_MONOTONIC). */
void acct__peak_time(struct acct *a, uint64_t ts_ns);

/*
 * The block of @size bytes at @addr, charged to @s (id @id), is no longer live:
 * freed by thread @tid (@freed), or replaced by a new block at the same
 * address whose free was never seen (!@freed, @tid ignored).
 */
void acct__release(struct acct *a, struct stack *s, uint32_t id, uint32_t tid, uint64_t addr,
		   uint64_t size, bool freed);

/* What stack @s (id @id) held when its process reached its peak (live bytes). */
void acct__at_peak(const struct acct *a, const struct stack *s, uint32_t id, uint64_t *count,
		   uint64_t *bytes);

#endif /* HEAPSNOOP_ACCT_H */

/* SPDX-License-Identifier: MIT */
/*
 * join.h - the model's live set and whole run side by side: each unique
 * (pid, stack) once, whether it has live blocks in the dump described,
 * a whole-run `stack` record up to it, or both, with the values of each.
 * Stacks are equal by pid and frames alone: a live stack's cut marks
 * (STACK_*) are or'ed into its entry, the whole-run records have none.
 * The order is the live set's (most bytes first), then the stacks that
 * only the whole run has, in the order their records came.
 */
#ifndef HEAPDECODE_JOIN_H
#define HEAPDECODE_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "stacks.h"

/* One (pid, stack) and what both sources say of it. */
struct hd_joined {
	const struct stack *stack;	/* its pid and frames (the first seen) */
	uint32_t flags;			/* its live records' STACK_* marks */
	uint64_t live_count, live_bytes;/* the live set's sums (signed, with
					 * a baseline), 0: none live */
	const struct stack *run;	/* its whole-run record (allocs,
					 * alloc_bytes, ...), NULL: none */
};

struct join;

/*
 * Join @nl live stacks @live (live_count and live_bytes the sums) and
 * @nr whole-run stacks @run; the stacks must outlive the join. NULL: no
 * memory.
 */
struct join *join__new(struct stack *const *live, size_t nl, struct stack *const *run, size_t nr);
void join__free(struct join *j);

/* The entries, in the order above (*@n). */
const struct hd_joined *join__entries(const struct join *j, size_t *n);

/* The pids of the entries, each once, ascending: a malloc'ed array of *@n; NULL: no memory. */
uint32_t *join__pids(const struct join *j, size_t *n);

#endif /* HEAPDECODE_JOIN_H */

/* SPDX-License-Identifier: MIT */
/*
 * stacks.h - heapdecode's unique stacks: every (pid, stack) of a log
 * stored once, with an id, the live allocations and bytes charged to it
 * and its whole-run counts, its frames whole (the model's and the
 * outputs' struct stack). Stacks hold at most REC_MAX_DEPTH frames,
 * innermost first. The tracer keeps its own as a tree of frames
 * (user/tracer/track/stacktree.h) and hands the gates a struct stack.
 */
#ifndef HEAPSNOOP_STACKS_H
#define HEAPSNOOP_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "heapsnoop/codec.h"
#include "records.h"

/* The same bits as a record's cut= (records.h REC_CUT_*). */
#define STACK_TRUNCATED	(1u << 0)	/* deeper than could be kept or walked */
#define STACK_FAULT	(1u << 1)	/* a frame could not be read */
#define STACK_ORDER	(1u << 2)	/* interpreter frames not placed exactly */
#define STACK_CUT_ALL	(STACK_TRUNCATED | STACK_FAULT | STACK_ORDER)

struct stack {
	uint64_t hash;
	uint32_t pid;
	uint32_t depth;
	uint32_t flags;		/* STACK_* */
	uint64_t live_count;
	uint64_t live_bytes;
	/*
	 * Whole-run counts since tracing began (the last `stack` record):
	 * calls, bytes asked for, frees, temporary allocations (freed before
	 * the thread allocated again); and the live count and bytes it had
	 * at its process's peak.
	 */
	uint64_t allocs, alloc_bytes, frees, temporary;
	uint64_t peak_count, peak_bytes;
	uint64_t frames[];
};

struct stacks;

struct stacks *stacks__new(void);
void stacks__free(struct stacks *st);

/*
 * Intern @depth (<= REC_MAX_DEPTH) frames of @pid; returns the stack's id
 * (>= 0) or -ENOMEM / -EINVAL.
 */
int stacks__intern(struct stacks *st, uint32_t pid, const uint64_t *frames, uint32_t depth,
		   uint32_t flags);

/*
 * For each stack of @from, its equal (pid, frames) in @st, interned
 * there if new (flags 0), and the two to @fn: how heapdecode subtracts a
 * baseline's values. Returns 0 or -ENOMEM.
 */
int stacks__match(struct stacks *st, const struct stacks *from,
		  void (*fn)(struct stack *into, const struct stack *from));

/* The stack with id @id (valid until stacks__free). */
struct stack *stacks__get(const struct stacks *st, uint32_t id);
size_t stacks__count(const struct stacks *st);

#endif /* HEAPSNOOP_STACKS_H */

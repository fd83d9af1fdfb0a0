/* SPDX-License-Identifier: MIT */
/*
 * stacks.h - every unique (pid, stack) stored once, with an id, the live
 * allocations and bytes currently charged to it, and its `~m#` bitstream
 * (codec's hs_stack_bits) encoded once, on first use.
 * Stacks hold at most HS_MAX_DEPTH frames, innermost first.
 */
#ifndef HEAPSNOOP_STACKS_H
#define HEAPSNOOP_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "heapsnoop/codec.h"

#define STACK_TRUNCATED	(1u << 0)	/* deeper than could be kept or walked */
#define STACK_FAULT	(1u << 1)	/* a frame could not be read */

struct stack {
	uint64_t hash;
	uint32_t pid;
	uint32_t depth;
	uint32_t flags;		/* STACK_* */
	uint64_t live_count;
	uint64_t live_bytes;
	/*
	 * Whole-run counts since tracing began (heapsnoop: acct.c; heapdecode:
	 * the last `stack` record): calls, bytes asked for, frees, temporary
	 * allocations (freed before the thread allocated again); and the live
	 * count and bytes it had at its process's peak. heapsnoop keeps the
	 * at-peak values lazily, and what it last wrote, beside the stack
	 * (acct.h's struct acct_stack).
	 */
	uint64_t allocs, alloc_bytes, frees, temporary;
	uint64_t peak_count, peak_bytes;
	struct hs_stack_bits *bits;	/* NULL until first encoded */
	uint64_t frames[];
};

struct stacks;

struct stacks *stacks__new(void);
void stacks__free(struct stacks *st);

/*
 * Intern @depth (<= HS_MAX_DEPTH) frames of @pid; returns the stack's id
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

/*
 * The `~m#` token of an allocation of @size bytes from stack @id into @out
 * (HS_TOKEN_BUF bytes). Returns its length or a negative hs_err.
 */
int stacks__token(struct stacks *st, uint32_t id, uint64_t size, char *out, size_t cap);

/*
 * The stacks with live allocations, most live bytes first (then most
 * allocations), as a calloc'ed array of *@n pointers the caller frees;
 * NULL if out of memory.
 */
struct stack **stacks__by_live_bytes(const struct stacks *st, size_t *n);

/* Bytes held by the table and its stacks. */
size_t stacks__memory(const struct stacks *st);

#endif /* HEAPSNOOP_STACKS_H */

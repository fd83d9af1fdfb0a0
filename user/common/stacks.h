/* SPDX-License-Identifier: MIT */
/*
 * stacks.h - every unique (pid, stack) stored once, with an id, the live
 * allocations and bytes currently charged to it, and its `~m#` tokens
 * encoded once, on first use: the first token's bitstream (codec's
 * hs_stack_bits; only its size field differs between allocations) and,
 * for a stack deeper than one token holds, the continuation tokens'
 * text (records.h). Stacks hold at most REC_MAX_DEPTH frames, innermost
 * first.
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
	char *tail;			/* ... its continuation tokens, " ~m#.."
					 * (NULL: none, or not yet encoded) */
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

/*
 * The `~m#` tokens of an allocation of @size bytes from stack @id into
 * @out (@cap bytes; HS_TOKEN_BUF for a stack of at most HS_MAX_DEPTH
 * frames, REC_TOKENS_BUF for any), as records__tokens() writes them.
 * Returns their length or a negative hs_err.
 */
int stacks__token(struct stacks *st, uint32_t id, uint64_t size, char *out, size_t cap);

/*
 * Stack @id's part of a `live` or `stack` record @r for @size bytes: its
 * tokens into @buf (@cap bytes, REC_TOKENS_BUF always enough) as
 * r->token and r->token_len, r->depth (depth=, for more than one token)
 * and the cut= of its flags. Returns 0, or a negative hs_err (r->token
 * NULL then, for a record that says why: HS_ERANGE for a size at or
 * above 2^63).
 */
int stacks__record(struct stacks *st, uint32_t id, uint64_t size, struct record *r, char *buf,
		   size_t cap);

/*
 * The stacks with live allocations, most live bytes first (then most
 * allocations), as a calloc'ed array of *@n pointers the caller frees;
 * NULL if out of memory.
 */
struct stack **stacks__by_live_bytes(const struct stacks *st, size_t *n);

/* Bytes held by the table and its stacks. */
size_t stacks__memory(const struct stacks *st);

#endif /* HEAPSNOOP_STACKS_H */

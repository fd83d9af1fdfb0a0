// SPDX-License-Identifier: MIT
/*
 * stacks.c - the unique-stack table (see stacks.h): heaptrack's "intern
 * once, refer by id" applied to whole stacks. An array of stacks by id and
 * an index of ids by content in the generic hash table (htab.h). A stack's
 * tokens are records.h's: its first token's bits kept for every size, the
 * continuation tokens (size 0) kept as text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "stacks.h"

struct stacks {
	struct stack **by_id;
	size_t count, cap;
	struct htab *index;	/* struct stack * -> id + 1 */
	size_t memory;
};

/* What stacks__intern looks for: a stack not stored yet. */
struct stack_probe {
	uint32_t pid, depth, flags;
	const uint64_t *frames;
};

static bool same_stack(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct stack *s = (const void *)stored;
	const struct stack_probe *p = (const void *)probe;

	(void)ctx;
	return s->pid == p->pid && s->depth == p->depth && s->flags == p->flags &&
	       !memcmp(s->frames, p->frames, p->depth * sizeof(*p->frames));
}

static uint64_t hash_stack(uint32_t pid, const uint64_t *frames, uint32_t depth)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ pid ^ ((uint64_t)depth << 32);

	for (uint32_t i = 0; i < depth; i++) {
		h ^= frames[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h | 1;
}

struct stacks *stacks__new(void)
{
	struct stacks *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->index = htab__new(16, same_stack, NULL);	/* most processes hold few */
	if (!st->index) {
		free(st);
		return NULL;
	}
	return st;
}

void stacks__free(struct stacks *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->count; i++) {
		free(st->by_id[i]->bits);
		free(st->by_id[i]->tail);
		free(st->by_id[i]);
	}
	free(st->by_id);
	htab__free(st->index);
	free(st);
}

int stacks__intern(struct stacks *st, uint32_t pid, const uint64_t *frames, uint32_t depth,
		   uint32_t flags)
{
	struct stack_probe probe = { pid, depth, flags, frames };
	uint64_t h = hash_stack(pid, frames, depth);
	void *known;
	struct stack *s;

	if (depth > REC_MAX_DEPTH)
		return -EINVAL;
	known = htab__find(st->index, h, (uintptr_t)&probe);
	if (known)
		return (int)((uintptr_t)known - 1);
	if (st->count == INT32_MAX - 1)
		return -ENOMEM;
	if (st->count == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		struct stack **v = realloc(st->by_id, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->by_id = v;
		st->cap = cap;
	}
	s = calloc(1, sizeof(*s) + depth * sizeof(*frames));
	if (!s)
		return -ENOMEM;
	s->hash = h;
	s->pid = pid;
	s->depth = depth;
	s->flags = flags;
	memcpy(s->frames, frames, depth * sizeof(*frames));
	if (htab__add(st->index, h, (uintptr_t)s, (void *)(uintptr_t)(st->count + 1))) {
		free(s);
		return -ENOMEM;
	}
	st->by_id[st->count] = s;
	st->memory += sizeof(*s) + depth * sizeof(*frames);
	return (int)st->count++;
}

int stacks__match(struct stacks *st, const struct stacks *from,
		  void (*fn)(struct stack *into, const struct stack *from))
{
	for (size_t i = 0; i < from->count; i++) {
		const struct stack *f = from->by_id[i];
		int id = stacks__intern(st, f->pid, f->frames, f->depth, 0);

		if (id < 0)
			return -ENOMEM;
		fn(st->by_id[id], f);
	}
	return 0;
}

struct stack *stacks__get(const struct stacks *st, uint32_t id)
{
	return id < st->count ? st->by_id[id] : NULL;
}

size_t stacks__count(const struct stacks *st)
{
	return st->count;
}

_Static_assert(STACK_TRUNCATED == REC_CUT_DEPTH && STACK_FAULT == REC_CUT_UNREADABLE &&
	       STACK_ORDER == REC_CUT_ORDER, "a stack's flags are its records' cut=");

/* @s's first token's bits and its continuation tokens, encoded once. */
static int encode(struct stacks *st, struct stack *s)
{
	struct hs_stack_bits tmp;
	uint32_t first = s->depth < HS_MAX_DEPTH ? s->depth : HS_MAX_DEPTH;
	size_t n;
	int err;

	if (s->bits)
		return 0;
	err = hs_stack_bits_encode(s->frames, first, &tmp);
	if (err)
		return err;
	if (s->depth > HS_MAX_DEPTH) {
		char *tail = malloc(REC_TOKENS_BUF);
		int len = tail ? records__tail_tokens(s->frames, s->depth, tail, REC_TOKENS_BUF)
			       : -HS_ENOSPC;
		char *fit = len >= 0 ? realloc(tail, (size_t)len + 1) : NULL;

		if (!fit) {
			free(tail);
			return len < 0 ? len : -HS_ENOSPC;
		}
		s->tail = fit;
		st->memory += (size_t)len + 1;
	}
	/* Keep only the bytes in use, not the whole worst-case buffer. */
	n = offsetof(struct hs_stack_bits, bits) + (tmp.nbits + 7) / 8;
	s->bits = malloc(n);
	if (!s->bits)
		return -HS_ENOSPC;
	memcpy(s->bits, &tmp, n);
	st->memory += n;
	return 0;
}

int stacks__token(struct stacks *st, uint32_t id, uint64_t size, char *out, size_t cap)
{
	struct stack *s = stacks__get(st, id);
	size_t tail;
	int err, n;

	if (!s)
		return -HS_ESYNTAX;
	err = encode(st, s);
	if (err)
		return err;
	n = hs_token_encode_stack(s->bits, size, out, cap);
	if (n < 0 || !s->tail)
		return n;
	tail = strlen(s->tail);
	if (cap - (size_t)n <= tail)
		return -HS_ENOSPC;
	memcpy(out + n, s->tail, tail + 1);
	return n + (int)tail;
}

int stacks__record(struct stacks *st, uint32_t id, uint64_t size, struct record *r, char *buf,
		   size_t cap)
{
	const struct stack *s = stacks__get(st, id);
	int n = stacks__token(st, id, size, buf, cap);

	r->cut = s ? s->flags & STACK_CUT_ALL : 0;
	r->token = n < 0 ? NULL : buf;
	r->token_len = n < 0 ? 0 : (size_t)n;
	r->depth = n >= 0 && s->depth > HS_MAX_DEPTH ? s->depth : 0;
	return n < 0 ? n : 0;
}

static int by_bytes_desc(const void *a, const void *b)
{
	const struct stack *x = *(struct stack *const *)a, *y = *(struct stack *const *)b;

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return x->live_count < y->live_count ? 1 : x->live_count > y->live_count ? -1 : 0;
}

struct stack **stacks__by_live_bytes(const struct stacks *st, size_t *n)
{
	struct stack **v = calloc(st->count ? st->count : 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < st->count; i++)
		if (st->by_id[i]->live_count)
			v[(*n)++] = st->by_id[i];
	qsort(v, *n, sizeof(*v), by_bytes_desc);
	return v;
}

size_t stacks__memory(const struct stacks *st)
{
	return st->memory + st->cap * sizeof(*st->by_id) + htab__memory(st->index);
}

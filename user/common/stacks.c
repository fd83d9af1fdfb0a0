// SPDX-License-Identifier: MIT
/*
 * stacks.c - heapdecode's unique-stack table (see stacks.h): heaptrack's
 * "intern once, refer by id" applied to whole stacks. An array of stacks
 * by id and an index of ids by content in the generic hash table
 * (htab.h).
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
	for (size_t i = 0; i < st->count; i++)
		free(st->by_id[i]);
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

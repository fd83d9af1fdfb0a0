// SPDX-License-Identifier: MIT
/*
 * stackcache.c - the stacks interned last (see stackcache.h): a
 * direct-mapped table, each slot the last stack whose hash fell there.
 */
#include <stdlib.h>
#include <string.h>

#include "stackcache.h"

struct entry {
	uint64_t hash;
	uint64_t tree;		/* its tree's serial; 0: empty */
	uint32_t id;
	uint16_t depth;
	uint16_t flags;
	uint64_t frames[STACK_CACHE_DEPTH];
};

struct stack_cache {
	struct entry e[STACK_CACHE_SLOTS];
};

struct stack_cache *stack_cache__new(void)
{
	return calloc(1, sizeof(struct stack_cache));
}

void stack_cache__free(struct stack_cache *sc)
{
	free(sc);
}

static uint64_t hash_of(uint64_t tree, const uint64_t *frames, uint32_t n, uint32_t flags)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ tree ^ ((uint64_t)n << 32 | flags);

	for (uint32_t i = 0; i < n; i++) {
		h ^= frames[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

bool stack_cache__find(const struct stack_cache *sc, uint64_t tree, const uint64_t *frames,
		       uint32_t n, uint32_t flags, uint64_t *hash, uint32_t *id)
{
	const struct entry *e;

	if (n > STACK_CACHE_DEPTH)
		return false;
	*hash = hash_of(tree, frames, n, flags);
	e = &sc->e[*hash % STACK_CACHE_SLOTS];
	if (e->hash != *hash || e->tree != tree || e->depth != n || e->flags != flags ||
	    memcmp(e->frames, frames, n * sizeof(*frames)))
		return false;
	*id = e->id;
	return true;
}

void stack_cache__put(struct stack_cache *sc, uint64_t tree, const uint64_t *frames, uint32_t n,
		      uint32_t flags, uint64_t hash, uint32_t id)
{
	struct entry *e;

	if (n > STACK_CACHE_DEPTH)
		return;
	e = &sc->e[hash % STACK_CACHE_SLOTS];
	e->hash = hash;
	e->tree = tree;
	e->id = id;
	e->depth = (uint16_t)n;
	e->flags = (uint16_t)flags;
	memcpy(e->frames, frames, n * sizeof(*frames));
}

size_t stack_cache__memory(const struct stack_cache *sc)
{
	return sizeof(*sc);
}

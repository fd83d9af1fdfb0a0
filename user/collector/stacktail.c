// SPDX-License-Identifier: MIT
/*
 * stacktail.c - the outer frames of deep stacks, interned (see
 * stacktail.h). One anonymous mapping: the arena, entries bump-allocated
 * in it by an atomic add, then the index, open addressing by a hash of
 * the frames, each slot an entry's id published by a compare-and-exchange
 * once the entry is whole. An id is the entry's offset in the arena / 8
 * + 1, so a reader needs no table. Two threads that intern the same new
 * stack at once both write an entry; one is published, the other's bytes
 * are left unused.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "heapsnoop/codec.h"
#include "htab.h"
#include "records.h"
#include "stacktail.h"

#define SLOTS (2 * STACKTAIL_MAX)	/* a power of two, kept at most half full */

struct entry {
	uint64_t hash;
	uint32_t depth;		/* the whole stack's */
	uint32_t ntail;		/* frames kept here: depth - HS_MAX_DEPTH */
	uint64_t frames[];	/* ntail frames, then the tokens, NUL-terminated */
};

enum { UNMAPPED, MAPPING, READY, FAILED };

static _Atomic int state;
static char *arena;			/* set before state is READY */
static _Atomic uint32_t *slots;		/* after the arena */
static _Atomic size_t top;		/* arena bytes handed out */
static _Atomic uint32_t count;		/* entries published */

/* Map the arena and the index once; false if that failed. */
static bool ready(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	void *p;

	if (s == READY)
		return true;
	if (s == UNMAPPED && atomic_compare_exchange_strong(&state, &s, MAPPING)) {
		p = mmap(NULL, STACKTAIL_ARENA + SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			atomic_store_explicit(&state, FAILED, memory_order_release);
			return false;
		}
		arena = p;
		slots = (_Atomic uint32_t *)(arena + STACKTAIL_ARENA);
		atomic_store_explicit(&state, READY, memory_order_release);
		return true;
	}
	/* Another thread maps it: a few microseconds. */
	while ((s = atomic_load_explicit(&state, memory_order_acquire)) == MAPPING)
		sched_yield();
	return s == READY;
}

static struct entry *entry_of(uint32_t id)
{
	return (struct entry *)(arena + (size_t)(id - 1) * 8);
}

static uint64_t hash_tail(const uint64_t *tail, uint32_t n)
{
	uint64_t h = n;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ tail[i]) * 0x9e3779b97f4a7c15ULL;
	return htab_hash2(h, 0) | 1;
}

static bool same(const struct entry *e, uint64_t h, const uint64_t *tail, uint32_t n)
{
	return e->hash == h && e->ntail == n && !memcmp(e->frames, tail, n * sizeof(*tail));
}

/* A new entry for @frames[@depth] in the arena; its id, or 0. */
static uint32_t write_entry(const uint64_t *frames, uint32_t depth, uint64_t h)
{
	uint32_t n = depth - HS_MAX_DEPTH;
	/* Each continuation token and its space at most: HS_TOKEN_BUF. */
	size_t cap = ((size_t)n + HS_MAX_DEPTH - 1) / HS_MAX_DEPTH * HS_TOKEN_BUF + 1;
	size_t size = (sizeof(struct entry) + n * sizeof(*frames) + cap + 7) & ~(size_t)7;
	size_t off = atomic_fetch_add_explicit(&top, size, memory_order_relaxed);
	struct entry *e;

	if (off + size > STACKTAIL_ARENA || off / 8 >= UINT32_MAX - 1)
		return 0;
	e = (struct entry *)(arena + off);
	e->hash = h;
	e->depth = depth;
	e->ntail = n;
	memcpy(e->frames, frames + HS_MAX_DEPTH, n * sizeof(*frames));
	if (records__tail_tokens(frames, depth, (char *)(e->frames + n), cap) < 0)
		return 0;
	return (uint32_t)(off / 8 + 1);
}

uint32_t stacktail__intern(const uint64_t *frames, uint32_t depth)
{
	const uint64_t *tail = frames + HS_MAX_DEPTH;
	uint32_t n = depth - HS_MAX_DEPTH, id = 0, slot;
	uint64_t h;

	if (depth <= HS_MAX_DEPTH || depth > REC_MAX_DEPTH || !ready())
		return 0;
	h = hash_tail(tail, n);
	/* Known? Then the first empty slot of its run is where it goes. */
	for (slot = (uint32_t)h & (SLOTS - 1);; slot = (slot + 1) & (SLOTS - 1)) {
		uint32_t v = atomic_load_explicit(&slots[slot], memory_order_acquire);

		if (!v)
			break;
		if (same(entry_of(v), h, tail, n))
			return v;
	}
	if (atomic_load_explicit(&count, memory_order_relaxed) >= STACKTAIL_MAX ||
	    !(id = write_entry(frames, depth, h)))
		return 0;
	/* Published once whole: a slot taken meanwhile may be the same stack. */
	for (;; slot = (slot + 1) & (SLOTS - 1)) {
		uint32_t v = 0;

		if (atomic_compare_exchange_strong_explicit(&slots[slot], &v, id,
							    memory_order_acq_rel,
							    memory_order_acquire)) {
			atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
			return id;
		}
		if (same(entry_of(v), h, tail, n))
			return v;
	}
}

const char *stacktail__tokens(uint32_t id, uint32_t *depth)
{
	const struct entry *e;

	if (!id || atomic_load_explicit(&state, memory_order_acquire) != READY ||
	    (size_t)(id - 1) * 8 >= atomic_load_explicit(&top, memory_order_relaxed))
		return NULL;
	e = entry_of(id);
	*depth = e->depth;
	return (const char *)(e->frames + e->ntail);
}

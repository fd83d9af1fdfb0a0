/* SPDX-License-Identifier: MIT */
/*
 * ltindex.h - the writer's private index of the live table's stack nodes
 * (ltstacks.c): a 64-bit key, the hash of the stack a node stands for,
 * to the ids stored under it. Open addressing with linear probing in
 * private memory (8 bytes a slot: the key's high half beside the id),
 * doubled when three quarters full; looked up without a lock, added to
 * by one thread at a time (the caller's lock). Its keys' collisions are
 * the caller's to tell apart: a key says where to look, the node itself
 * whether it is the one.
 */
#ifndef HEAPSNOOP_COLLECTOR_LTINDEX_H
#define HEAPSNOOP_COLLECTOR_LTINDEX_H

#include <stdbool.h>
#include <stdint.h>

/* The first table (4096 slots, pages touched as used). Returns 0 or -ENOMEM. */
int ltindex__init(void);

/* A table (ltindex.c): its mask, its count, its slots: high half of the key << 32 | id. */
struct ltindex_table {
	uint64_t mask;
	uint64_t used;
	uint64_t slot[];
};
extern struct ltindex_table *ltindex_cur;	/* published with release */

/*
 * The first id stored under @key for which @match(@arg, id) holds, or 0.
 * Lock-free: an id added meanwhile may be missed (the caller looks again
 * under its lock before adding). Inline, so that @match is too.
 */
static inline uint32_t ltindex__find(uint64_t key, bool (*match)(const void *arg, uint32_t id),
				     const void *arg)
{
	const struct ltindex_table *t = __atomic_load_n(&ltindex_cur, __ATOMIC_ACQUIRE);
	uint64_t mask, i;

	if (!t)
		return 0;
	/* Read once: a table given back reads as zeros, and its probe still ends. */
	mask = __atomic_load_n(&t->mask, __ATOMIC_RELAXED);
	i = (key >> 32) & mask;
	for (uint64_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uint64_t v = __atomic_load_n(&t->slot[i], __ATOMIC_ACQUIRE);

		if (!v)
			return 0;
		if (v >> 32 == key >> 32 && match(arg, (uint32_t)v))
			return (uint32_t)v;
	}
	return 0;
}

/* The slots keys @key[@n] start at, asked of the memory now (a hint). */
static inline void ltindex__prefetch(const uint64_t *key, uint32_t n)
{
	const struct ltindex_table *t = __atomic_load_n(&ltindex_cur, __ATOMIC_ACQUIRE);
	uint64_t mask = t ? __atomic_load_n(&t->mask, __ATOMIC_RELAXED) : 0;

	for (uint32_t i = 0; t && i < n; i++)
		__builtin_prefetch(&t->slot[(key[i] >> 32) & mask]);
}

/*
 * @id (not 0) stored under @key, its node whole before (the store is a
 * release). The caller holds its lock: one adder at a time. A full table
 * is doubled first; the old one's pages are given back (a lookup still
 * in it finds nothing there, and looks again under the lock). Returns 0
 * or -ENOMEM (not stored: never found, so interned again: a second copy,
 * never a wrong one).
 */
int ltindex__add(uint64_t key, uint32_t id);

/* Slots in use and bytes of slots mapped now, for tests and the docs' numbers. */
void ltindex__stats(uint64_t *used, uint64_t *bytes);

#endif /* HEAPSNOOP_COLLECTOR_LTINDEX_H */

// SPDX-License-Identifier: MIT
/*
 * ltindex.c - the stack nodes' private index (see ltindex.h). A table is
 * one mapping: its mask, its count, then its slots, each the key's high
 * 32 bits << 32 | the id (0: empty; no id is 0). A slot's home is those
 * 32 bits' low ones, so a slot says its own home and doubling needs no
 * key again; the rest of them tell most other keys apart before a node
 * is read (at 2^24 slots, 8 bits: 1 in 256). Doubling rehashes every slot into a new mapping, then
 * publishes it (release); the old one's slots are dropped with
 * MADV_DONTNEED, so a lookup still in it reads zeros: an empty slot, a
 * miss, never a wrong id, and its probe ends (it reads the mask once and
 * probes at most that many slots).
 */
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include "ltindex.h"

#define FIRST_SLOTS 4096u

#define table ltindex_table

struct ltindex_table *ltindex_cur;

static struct table *table_new(uint64_t slots)
{
	struct table *t = mmap(NULL, sizeof(*t) + slots * 8, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (t == MAP_FAILED)
		return NULL;
	t->mask = slots - 1;
	return t;
}

int ltindex__init(void)
{
	struct table *t = table_new(FIRST_SLOTS);

	if (!t)
		return -ENOMEM;
	__atomic_store_n(&ltindex_cur, t, __ATOMIC_RELEASE);
	return 0;
}

/* @v into @t's first empty slot from its home. */
static void put(struct table *t, uint64_t v)
{
	uint64_t i = (v >> 32) & t->mask;

	while (t->slot[i])
		i = (i + 1) & t->mask;
	__atomic_store_n(&t->slot[i], v, __ATOMIC_RELEASE);
	t->used++;
}

/* A table twice @t's, every slot in it; NULL without memory. */
static struct table *doubled(const struct table *t)
{
	struct table *d = table_new((t->mask + 1) * 2);

	if (!d)
		return NULL;
	for (uint64_t i = 0; i <= t->mask; i++)
		if (t->slot[i])
			put(d, t->slot[i]);
	return d;
}

int ltindex__add(uint64_t key, uint32_t id)
{
	struct table *t = ltindex_cur;
	uint64_t v = (key >> 32) << 32 | id;

	if (!t)
		return -ENOMEM;
	if ((t->used + 1) * 4 > (t->mask + 1) * 3) {
		struct table *d = doubled(t);

		if (!d)
			return -ENOMEM;
		__atomic_store_n(&ltindex_cur, d, __ATOMIC_RELEASE);
		madvise(t, sizeof(*t) + (t->mask + 1) * 8, MADV_DONTNEED);
		t = d;
	}
	put(t, v);
	return 0;
}

void ltindex__stats(uint64_t *used, uint64_t *bytes)
{
	const struct table *t = __atomic_load_n(&ltindex_cur, __ATOMIC_ACQUIRE);

	*used = t ? t->used : 0;
	*bytes = t ? (t->mask + 1) * 8 : 0;
}

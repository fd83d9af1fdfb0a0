// SPDX-License-Identifier: MIT
/*
 * stackcache.c - encoded stacks kept by their frames (see stackcache.h): two ways a set,
 * the newer first, the older evicted.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "htab.h"
#include "stackcache.h"

#define ENTRIES 8192	/* a power of two: 4096 sets of two */
/* The part of an hs_stack_bits in use. */
#define SB_BYTES(sb) (offsetof(struct hs_stack_bits, bits) + ((sb)->nbits + 7) / 8)

struct entry {
	atomic_flag busy;
	uint32_t depth;		/* 0: empty (a stack of no frames is not kept) */
	uint64_t frames[HS_MAX_DEPTH];
	struct hs_stack_bits sb;
};

static struct entry *table;
static atomic_int mapping;	/* 1 while one thread maps the table */

static struct entry *get_table(void)
{
	void *p;

	if (table)
		return table;
	if (atomic_exchange(&mapping, 1))
		return NULL;	/* another thread maps it: encode meanwhile */
	p = mmap(NULL, ENTRIES * sizeof(struct entry), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		table = p;	/* zero pages: every entry empty and free */
	return table;
}

/* One multiply a frame, mixed once at the end (htab_hash2). */
static uint64_t hash_frames(const uint64_t *frames, uint32_t depth)
{
	uint64_t h = depth;

	for (uint32_t i = 0; i < depth; i++)
		h = (h ^ frames[i]) * 0x9e3779b97f4a7c15ULL;
	return htab_hash2(h, 0);
}

static bool same(const struct entry *e, const uint64_t *frames, uint32_t depth)
{
	return e->depth == depth && !memcmp(e->frames, frames, depth * sizeof(*frames));
}

static void keep(struct entry *e, const uint64_t *frames, uint32_t depth,
		 const struct hs_stack_bits *sb)
{
	e->depth = depth;
	memcpy(e->frames, frames, depth * sizeof(*frames));
	memcpy(&e->sb, sb, SB_BYTES(sb));
}

int stackcache__bits(const uint64_t *frames, uint32_t depth, struct hs_stack_bits *sb)
{
	struct entry *t = get_table(), *set;
	int err;

	if (!t || !depth || depth > HS_MAX_DEPTH)
		return hs_stack_bits_encode(frames, depth, sb);
	/* Two ways a set, under the first one's lock. */
	set = &t[hash_frames(frames, depth) & (ENTRIES - 2)];
	if (atomic_flag_test_and_set_explicit(&set->busy, memory_order_acquire))
		return hs_stack_bits_encode(frames, depth, sb);
	if (same(&set[0], frames, depth) || same(&set[1], frames, depth)) {
		const struct entry *e = same(&set[0], frames, depth) ? &set[0] : &set[1];

		memcpy(sb, &e->sb, SB_BYTES(&e->sb));
		err = 0;
	} else {
		err = hs_stack_bits_encode(frames, depth, sb);
		/* The newer way moves to the second: the older one goes. */
		if (!err) {
			if (set[0].depth)
				keep(&set[1], set[0].frames, set[0].depth, &set[0].sb);
			keep(&set[0], frames, depth, sb);
		}
	}
	atomic_flag_clear_explicit(&set->busy, memory_order_release);
	return err;
}

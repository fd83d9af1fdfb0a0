// SPDX-License-Identifier: MIT
/*
 * stackcache.c - encoded stacks kept by their frames (see stackcache.h).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "htab.h"
#include "stackcache.h"

#define ENTRIES 4096	/* a power of two */
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

static uint64_t hash_frames(const uint64_t *frames, uint32_t depth)
{
	uint64_t h = depth;

	for (uint32_t i = 0; i < depth; i++)
		h = htab_hash2(h, frames[i]);
	return h;
}

int stackcache__bits(const uint64_t *frames, uint32_t depth, struct hs_stack_bits *sb)
{
	struct entry *t = get_table(), *e;
	size_t bytes = depth * sizeof(*frames);
	int err;

	if (!t || !depth || depth > HS_MAX_DEPTH)
		return hs_stack_bits_encode(frames, depth, sb);
	e = &t[hash_frames(frames, depth) & (ENTRIES - 1)];
	if (atomic_flag_test_and_set_explicit(&e->busy, memory_order_acquire))
		return hs_stack_bits_encode(frames, depth, sb);
	if (e->depth == depth && !memcmp(e->frames, frames, bytes)) {
		memcpy(sb, &e->sb, SB_BYTES(&e->sb));
		err = 0;
	} else {
		err = hs_stack_bits_encode(frames, depth, sb);
		if (!err) {
			e->depth = depth;
			memcpy(e->frames, frames, bytes);
			memcpy(&e->sb, sb, SB_BYTES(sb));
		}
	}
	atomic_flag_clear_explicit(&e->busy, memory_order_release);
	return err;
}

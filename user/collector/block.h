/* SPDX-License-Identifier: MIT */
/*
 * block.h - what the preload keeps behind each block it tracks: 16
 * bytes before the user's pointer (its slot in the live table, how far
 * back the C library's block begins, and a magic number mixed with the
 * address, last, as libhsam's node ends: alloc_metadata.h), so that
 * free() finds the entry without a lookup and tells the preload's blocks
 * from the C library's by one 4-byte load. The record itself is in the
 * table (livetable.h). tests/collector/prog_death.c reads the magic to
 * know which of its blocks were sampled.
 */
#ifndef HEAPSNOOP_COLLECTOR_BLOCK_H
#define HEAPSNOOP_COLLECTOR_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct pl_block {
	uint32_t slot;			/* the entry's slot; LT_NO_SLOT: none (table full) */
	uint32_t head;			/* bytes from the C library's block to the user's */
	uint32_t reserved;
	uint32_t magic;			/* pl_block_magic() of this header; 0 once freed */
};

/* "hspl", mixed with the header's address; never 0 (glibc's chunk size's upper half is). */
static inline uint32_t pl_block_magic(const struct pl_block *b)
{
	uintptr_t a = (uintptr_t)b;

	return (0x6873706cu ^ (uint32_t)(a >> 4) ^ (uint32_t)((uint64_t)a >> 36)) | 1;
}

static inline struct pl_block *pl_block_of(const void *user)
{
	return (struct pl_block *)user - 1;
}

/*
 * Is @user a block of ours? It reads the 4 bytes before a block that may
 * not be ours, by contract: never ASan's business.
 */
__attribute__((no_sanitize_address)) static inline bool pl_block_ours(const void *user)
{
	uint32_t m;

	__builtin_memcpy(&m, &pl_block_of(user)->magic, sizeof(m));
	return m == pl_block_magic(pl_block_of(user));
}

#endif /* HEAPSNOOP_COLLECTOR_BLOCK_H */

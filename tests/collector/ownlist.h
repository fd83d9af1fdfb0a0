/* SPDX-License-Identifier: MIT */
/*
 * ownlist.h - prog_death's own list of its live blocks, in a file it maps
 * shared (it survives kill -9), read by check_death: one slot per block a
 * thread may hold, each call marked in flight before it and settled
 * after it, so that a checker knows what the program held when it died
 * and which calls it was in.
 */
#ifndef OWNLIST_H
#define OWNLIST_H

#include <stdint.h>

#define OWN_MAGIC 0x747369746165646full	/* "odeatlist" */
#define OWN_SLOTS 1024

enum {
	OWN_EMPTY,
	OWN_ALLOC,		/* in an allocation: size set, ptr not yet */
	OWN_HELD,		/* ptr, size */
	OWN_FREE,		/* in free(ptr) */
	OWN_REALLOC,		/* in realloc(ptr, newsize) */
	OWN_REALLOC_DONE,	/* it returned newptr; ptr not yet replaced */
};

struct own {
	uint32_t state;		/* OWN_*, written with release */
	uint32_t sampled;	/* the collector tracks the block (its mark) */
	uint64_t ptr, size;
	uint64_t newptr, newsize;
	uint32_t newsampled, pad;
};

struct ownlist {
	uint64_t magic;
	int32_t pid;
	uint32_t nthreads;		/* OWN_SLOTS slots each */
	uint64_t ops_start, ops_end;	/* the text of the functions that call the allocator */
	struct own own[];
};

#endif /* OWNLIST_H */

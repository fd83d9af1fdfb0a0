/* SPDX-License-Identifier: MIT */
/*
 * livecount.h - a live set's count and bytes per stack as heapdecode adds
 * them up: every live block as it is, or, when its dump is a sample by
 * bytes (the `dump` line's sample-bytes=M, docs/OUTPUT.md), as what it
 * stands for: a block of s bytes sampled with p = 1 - e^(-s/M) counts
 * s/p bytes and 1/p blocks (sampling.h), tcmalloc's unbiased estimate.
 * The sums go into struct stack's live_count and live_bytes, which every
 * report reads (--report, -s, --folded, --flamegraph, --dump all and any
 * later one), so each is scaled in this one place. Counts are summed as
 * fractions and rounded when stored, never rounded block by block.
 */
#ifndef HEAPSNOOP_DECODE_LIVECOUNT_H
#define HEAPSNOOP_DECODE_LIVECOUNT_H

#include <stdint.h>

#include "stacks.h"

struct livecount {
	uint64_t mean;		/* sample-bytes of the dump, 0: not sampled */
	double *count;		/* by stack id: estimated blocks (sampled only) */
	size_t cap;
	double total;		/* estimated blocks of the whole set */
};

/* Start a live set (a dump) of sampling mean @mean (0: none); frees sums. */
void livecount__reset(struct livecount *lc, uint64_t mean);

/*
 * Add one live block of @size bytes to stack @s (id @id) and to the totals
 * *@total_bytes, *@total_count. Returns 0 or -ENOMEM (nothing added).
 */
int livecount__add(struct livecount *lc, struct stack *s, uint32_t id, uint64_t size,
		   uint64_t *total_bytes, uint64_t *total_count);

/* What one block of @size stands for, in *@bytes and *@count. */
void livecount__one(const struct livecount *lc, uint64_t size, uint64_t *bytes, double *count);

#endif /* HEAPSNOOP_DECODE_LIVECOUNT_H */

/* SPDX-License-Identifier: MIT */
/*
 * livecount.h - a live set's count and bytes per stack as heapdecode adds
 * them up: every live block as it is, or, when it was recorded as a
 * sample, as what it stands for (sampling.h): its dump a sample by bytes
 * (the `dump` line's sample-bytes=M: a block of s bytes sampled with
 * p = 1 - e^(-s/M), tcmalloc's), or the block itself one of the tracer's
 * while it shed load (its `live` record's shed=M: p = min(1, s/M)), or
 * both; it counts s/p bytes and 1/p blocks, an unbiased estimate. The
 * sums go into struct stack's live_count and live_bytes, which every
 * report reads (--report, -s, --folded, --flamegraph, --dump all and any
 * later one), so each is scaled in this one place. Counts are summed as
 * fractions and rounded when stored, never rounded block by block; the
 * estimate's variance is summed beside them, for its margin.
 */
#ifndef HEAPSNOOP_DECODE_LIVECOUNT_H
#define HEAPSNOOP_DECODE_LIVECOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "stacks.h"

struct livecount {
	uint64_t mean;		/* sample-bytes of the dump, 0: not sampled */
	bool sampled;		/* a block of it was (mean, or a shed= record) */
	uint64_t shed_blocks;	/* its blocks recorded as shed samples */
	/*
	 * By stack id, once the set has a sampled block: the stack's
	 * estimated blocks (0: it has none sampled, its count whole in
	 * struct stack's)
	 */
	double *count;
	size_t cap;
	double total;		/* estimated blocks of the whole set, once sampled */
	double var;		/* the estimated bytes' variance (bytes^2) */
};

/* Start a live set (a dump) of sampling mean @mean (0: none); frees sums. */
void livecount__reset(struct livecount *lc, uint64_t mean);

/*
 * Add one live block of @size bytes, shed at mean @shed (its record's
 * shed=, 0: none), to stack @s (id @id) and to the totals *@total_bytes,
 * *@total_count. Returns 0 or -ENOMEM (nothing added).
 */
int livecount__add(struct livecount *lc, struct stack *s, uint32_t id, uint64_t size,
		   uint64_t shed, uint64_t *total_bytes, uint64_t *total_count);

/* What one block of @size bytes, shed at mean @shed, stands for: *@bytes, *@count. */
void livecount__one(const struct livecount *lc, uint64_t size, uint64_t shed, uint64_t *bytes,
		    double *count);

#endif /* HEAPSNOOP_DECODE_LIVECOUNT_H */

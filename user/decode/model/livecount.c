// SPDX-License-Identifier: MIT
/*
 * livecount.c - a live set's per-stack sums, scaled when sampled (see
 * livecount.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "livecount.h"
#include "sampling.h"

void livecount__reset(struct livecount *lc, uint64_t mean)
{
	free(lc->count);
	*lc = (struct livecount){ .mean = mean };
}

void livecount__one(const struct livecount *lc, uint64_t size, uint64_t *bytes, double *count)
{
	*bytes = sample_estimate(size, lc->mean);
	*count = sample_weight(size, lc->mean);
}

/* Room for stack @id's sum; 0 or -ENOMEM. */
static int reserve(struct livecount *lc, uint32_t id)
{
	size_t cap = lc->cap ? lc->cap : 64;
	double *v;

	if (id < lc->cap)
		return 0;
	while (cap <= id)
		cap *= 2;
	v = realloc(lc->count, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = lc->cap; i < cap; i++)
		v[i] = 0;
	lc->count = v;
	lc->cap = cap;
	return 0;
}

int livecount__add(struct livecount *lc, struct stack *s, uint32_t id, uint64_t size,
		   uint64_t *total_bytes, uint64_t *total_count)
{
	uint64_t bytes;
	double count;

	if (!lc->mean) {
		s->live_count++;
		s->live_bytes += size;
		++*total_count;
		*total_bytes += size;
		return 0;
	}
	if (reserve(lc, id))
		return -ENOMEM;
	livecount__one(lc, size, &bytes, &count);
	lc->count[id] += count;
	lc->total += count;
	s->live_count = (uint64_t)llround(lc->count[id]);
	s->live_bytes += bytes;
	*total_count = (uint64_t)llround(lc->total);
	*total_bytes += bytes;
	return 0;
}

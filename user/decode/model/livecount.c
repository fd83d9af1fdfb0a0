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

void livecount__one(const struct livecount *lc, uint64_t size, uint64_t shed, uint64_t *bytes,
		    double *count)
{
	sample_stands_for(size, lc->mean, shed, count, bytes, NULL);
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
		   uint64_t shed, uint64_t *total_bytes, uint64_t *total_count)
{
	uint64_t bytes;
	double count, var;

	if (!lc->mean && !shed) {
		/* Whole; its stack's count a sum of fractions once it had a sample. */
		if (id < lc->cap && lc->count[id] > 0) {
			lc->count[id] += 1;
			s->live_count = (uint64_t)llround(lc->count[id]);
		} else {
			s->live_count++;
		}
		s->live_bytes += size;
		if (lc->sampled) {
			lc->total += 1;
			*total_count = (uint64_t)llround(lc->total);
		} else {
			++*total_count;
		}
		*total_bytes += size;
		return 0;
	}
	if (reserve(lc, id))
		return -ENOMEM;
	if (!lc->sampled) {
		lc->sampled = true;
		lc->total = (double)*total_count;
	}
	if (lc->count[id] <= 0)
		lc->count[id] = (double)s->live_count;
	sample_stands_for(size, lc->mean, shed, &count, &bytes, &var);
	if (shed)
		lc->shed_blocks++;
	lc->count[id] += count;
	lc->total += count;
	lc->var += var;
	s->live_count = (uint64_t)llround(lc->count[id]);
	s->live_bytes += bytes;
	*total_count = (uint64_t)llround(lc->total);
	*total_bytes += bytes;
	return 0;
}

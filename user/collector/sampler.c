// SPDX-License-Identifier: MIT
/*
 * sampler.c - Poisson sampling by bytes (see sampler.h; tcmalloc's
 * Sampler::PickNextSamplingPoint, with an exponential gap from -ln(U)).
 */
#include <math.h>

#include "sampler.h"

static uint64_t next_u64(struct sampler *s)
{
	uint64_t x = s->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* An exponential gap of mean @mean bytes, at least 1. */
static int64_t draw_gap(struct sampler *s, uint64_t mean)
{
	/* U in (0, 1]: 53 random bits, never 0. */
	double u = ((next_u64(s) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double gap = -log(u) * (double)mean;

	return gap < 1 ? 1 : gap > 9e18 ? (int64_t)9e18 : (int64_t)gap;
}

void sampler__init(struct sampler *s, uint64_t seed, uint64_t mean)
{
	s->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	s->until = draw_gap(s, mean);
}

bool sampler__hit_slow(struct sampler *s, uint64_t mean)
{
	/*
	 * Sampled once however many points fell in it; the next point is an
	 * exponential gap past its end (the process has no memory).
	 */
	s->until = draw_gap(s, mean);
	return true;
}


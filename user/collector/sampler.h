/* SPDX-License-Identifier: MIT */
/*
 * sampler.h - sampling by bytes, as tcmalloc does: sample points fall on
 * the allocated bytes as a Poisson process of mean @mean bytes apart, so
 * an allocation of s bytes is sampled with probability p = 1 - e^(-s/mean)
 * and stands for s/p bytes (sample_estimate(), user/common/sampling.h).
 * One sampler per thread (no lock); the gaps are drawn from its own
 * xorshift64* generator, seeded for repeatable tests.
 */
#ifndef HEAPSNOOP_COLLECTOR_SAMPLER_H
#define HEAPSNOOP_COLLECTOR_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

struct sampler {
	int64_t until;		/* bytes left before the next sample point */
	uint64_t rng;		/* xorshift64* state, never 0 */
};

/* Start @s with seed @seed (any value; 0 is replaced) and mean @mean. */
void sampler__init(struct sampler *s, uint64_t seed, uint64_t mean);

/* The next gap, drawn when a point fell (out of line: rare). */
bool sampler__hit_slow(struct sampler *s, uint64_t mean);
/* Account @size bytes: true if a sample point falls in them. */
static inline bool sampler__hit(struct sampler *s, uint64_t size, uint64_t mean)
{
	s->until -= (int64_t)size;
	return s->until <= 0 && sampler__hit_slow(s, mean);
}

#endif /* HEAPSNOOP_COLLECTOR_SAMPLER_H */

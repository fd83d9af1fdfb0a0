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

/*
 * Sizes are counted by their low 62 bits: one of 2^62 bytes or more (a
 * request that fails) can neither raise the countdown nor wrap it, which
 * starts each count in [0, 9e18].
 */
#define SAMPLER_SIZE_MASK ((1ull << 62) - 1)

struct sampler {
	int64_t until;		/* bytes left before the next sample point */
	uint64_t rng;		/* xorshift64* state, never 0 */
};

/* Start @s with seed @seed (any value; 0 is replaced) and mean @mean. */
void sampler__init(struct sampler *s, uint64_t seed, uint64_t mean);

/* The next gap, drawn when a point fell (out of line: rare). Returns true. */
bool sampler__hit_slow(struct sampler *s, uint64_t mean);

/*
 * Count @size bytes down: true if they reach the next sample point (or
 * @s is all zero: not started), which the caller confirms with
 * sampler__hit_slow() or undoes with sampler__uncount(). The whole fast
 * path of an unsampled allocation: a subtraction and a branch.
 */
static inline bool sampler__due(struct sampler *s, uint64_t size)
{
	s->until -= (int64_t)(size & SAMPLER_SIZE_MASK);
	return s->until <= 0;
}

/* Take back @size bytes sampler__due() counted (not the program's). */
static inline void sampler__uncount(struct sampler *s, uint64_t size)
{
	s->until += (int64_t)(size & SAMPLER_SIZE_MASK);
}

#endif /* HEAPSNOOP_COLLECTOR_SAMPLER_H */

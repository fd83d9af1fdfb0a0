/* SPDX-License-Identifier: MIT */
/*
 * sampling.h - the maths of sampling by bytes, shared by the preload
 * collector (user/collector/sampler.c, which draws the gaps in the
 * process) and the BPF tracer (bpf/heapsnoop.bpf.c draws them from a table
 * the loader fills): sample points fall on the allocated bytes as a
 * Poisson process of mean M bytes apart (tcmalloc's), so an allocation of
 * s bytes is sampled with p = 1 - e^(-s/M) and stands for s/p bytes: an
 * unbiased estimate of the bytes it represents.
 */
#ifndef HEAPSNOOP_SAMPLING_H
#define HEAPSNOOP_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

/*
 * The bytes a sampled allocation of @size bytes stands for (mean @mean
 * bytes): size/p, rounded; @size itself when @mean is 0 (not sampled).
 */
uint64_t sample_estimate(uint64_t size, uint64_t mean);

/*
 * The allocations a sampled one of @size bytes stands for: 1/p (>= 1;
 * 1 when @mean is 0, or @size is 0, which is never sampled).
 */
double sample_weight(uint64_t size, uint64_t mean);

/*
 * Load shed by sampling (the BPF tracer's --on-full sample, bpf/alloc.h
 * shed_keep): an allocation of s bytes made while the loader fell behind
 * is recorded with probability min(1, s/M) for the shed mean @shed (M, a
 * power of two: the draw is exact), and then stands for max(s, M) bytes
 * and max(1, M/s) allocations. @shed 0: recorded as every one is.
 * shed_weight() is 1/p; a block both shed and sampled by bytes (--sample-
 * bytes, mean @mean) stands for s times the product of both weights.
 */
double shed_weight(uint64_t size, uint64_t shed);

/*
 * The allocations and bytes a recorded block of @size bytes stands for,
 * sampled by bytes of mean @mean (0: not) and shed at mean @shed (0: not):
 * *@count (>= 1) and *@bytes (rounded), and into *@var what the bytes add
 * to the variance of an estimated total (Horvitz-Thompson, Bernoulli
 * draws: (1 - p) (s/p)^2, 0 for a block recorded surely), NULL: not wanted.
 */
void sample_stands_for(uint64_t size, uint64_t mean, uint64_t shed, double *count,
		       uint64_t *bytes, double *var);

/*
 * Fill @t[@n] with the quantiles -ln((i + 1/2) / n) of the unit exponential
 * distribution in 16.16 fixed point, scaled so that their mean is exactly
 * 1.0: a gap of mean M bytes is (M * t[random % n]) >> 16.
 */
void sample_gap_table(uint32_t *t, size_t n);

#endif /* HEAPSNOOP_SAMPLING_H */

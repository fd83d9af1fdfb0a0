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
 * Fill @t[@n] with the quantiles -ln((i + 1/2) / n) of the unit exponential
 * distribution in 16.16 fixed point, scaled so that their mean is exactly
 * 1.0: a gap of mean M bytes is (M * t[random % n]) >> 16.
 */
void sample_gap_table(uint32_t *t, size_t n);

#endif /* HEAPSNOOP_SAMPLING_H */

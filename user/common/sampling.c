// SPDX-License-Identifier: MIT
/*
 * sampling.c - estimates and gap quantiles of sampling by bytes (see
 * sampling.h).
 */
#include <math.h>

#include "sampling.h"

uint64_t sample_estimate(uint64_t size, uint64_t mean)
{
	double p;

	if (!size || !mean)
		return size;
	p = -expm1(-(double)size / (double)mean);
	return (uint64_t)((double)size / p + 0.5);
}

double sample_weight(uint64_t size, uint64_t mean)
{
	if (!size || !mean)
		return 1;
	return 1 / -expm1(-(double)size / (double)mean);
}

double shed_weight(uint64_t size, uint64_t shed)
{
	if (!size || size >= shed)
		return 1;
	return (double)shed / (double)size;
}

void sample_stands_for(uint64_t size, uint64_t mean, uint64_t shed, double *count,
		       uint64_t *bytes, double *var)
{
	double w = sample_weight(size, mean) * shed_weight(size, shed), b = (double)size * w;

	*count = w;
	*bytes = (uint64_t)(b + 0.5);
	if (var)
		*var = (1 - 1 / w) * b * b;
}

void sample_gap_table(uint32_t *t, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += -log((i + 0.5) / (double)n);
	for (size_t i = 0; i < n; i++)
		t[i] = (uint32_t)(-log((i + 0.5) / (double)n) * n / sum * 65536.0 + 0.5);
}

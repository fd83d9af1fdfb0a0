/* SPDX-License-Identifier: MIT */
/*
 * top.h - the whole run's stacks ranked, as heaptrack_print ranks them:
 * by bytes at their process's peak, by calls to allocation functions, by
 * temporary allocations, by bytes allocated, by live bytes at the end
 * (--sort, --stats, --json, --folded --sort). With a baseline subtracted
 * the values are differences, ranked signed.
 */
#ifndef HEAPDECODE_TOP_H
#define HEAPDECODE_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "stacks.h"

/* What a top list is ranked by (--sort). */
enum hd_sort {
	HD_SORT_PEAK, HD_SORT_ALLOCATIONS, HD_SORT_TEMPORARY, HD_SORT_ALLOCATED, HD_SORT_LIVE,
	HD_SORT__ALL,	/* --stats without --sort: every list */
};

/* @s's enum hd_sort value from its name ("peak", ...); -EINVAL if none. */
int hd_top__parse_sort(const char *s, enum hd_sort *out);

/*
 * Whole-run stack @s's value for @sort, and in *@count the number that
 * goes with it (the allocations of bytes, the bytes of allocations).
 */
uint64_t hd_top__value(const struct stack *s, enum hd_sort sort, uint64_t *count);

/* Rank @n stacks @v by @sort, biggest first (then by count, then by pid). */
void hd_top__sort(struct stack **v, size_t n, enum hd_sort sort);

#endif /* HEAPDECODE_TOP_H */

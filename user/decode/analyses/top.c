// SPDX-License-Identifier: MIT
/*
 * top.c - the whole run's stacks ranked (see top.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/top.h"

static const char *const sort_names[] = {
	[HD_SORT_PEAK] = "peak", [HD_SORT_ALLOCATIONS] = "allocations",
	[HD_SORT_TEMPORARY] = "temporary", [HD_SORT_ALLOCATED] = "allocated",
	[HD_SORT_LIVE] = "live",
};

int hd_top__parse_sort(const char *s, enum hd_sort *out)
{
	for (size_t i = 0; i < HD_SORT__ALL; i++) {
		if (!strcmp(s, sort_names[i])) {
			*out = (enum hd_sort)i;
			return 0;
		}
	}
	return -EINVAL;
}

uint64_t hd_top__value(const struct stack *s, enum hd_sort sort, uint64_t *count)
{
	switch (sort) {
	case HD_SORT_PEAK:
		*count = s->peak_count;
		return s->peak_bytes;
	case HD_SORT_ALLOCATIONS:
		*count = s->alloc_bytes;
		return s->allocs;
	case HD_SORT_TEMPORARY:
		*count = s->allocs;
		return s->temporary;
	case HD_SORT_ALLOCATED:
		*count = s->allocs;
		return s->alloc_bytes;
	default:
		*count = s->live_count;
		return s->live_bytes;
	}
}

/* qsort_r: by the enum hd_sort @ctx points to, biggest first. */
static int by_value_desc(const void *a, const void *b, void *ctx)
{
	const struct stack *x = *(struct stack *const *)a, *y = *(struct stack *const *)b;
	enum hd_sort sort = *(const enum hd_sort *)ctx;
	uint64_t cx, cy, kx = hd_top__value(x, sort, &cx), ky = hd_top__value(y, sort, &cy);

	/* Signed: with --base these are differences. */
	if (kx != ky)
		return (int64_t)kx < (int64_t)ky ? 1 : -1;
	if (cx != cy)
		return (int64_t)cx < (int64_t)cy ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void hd_top__sort(struct stack **v, size_t n, enum hd_sort sort)
{
	qsort_r(v, n, sizeof(*v), by_value_desc, &sort);
}

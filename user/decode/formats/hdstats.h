/* SPDX-License-Identifier: MIT */
/*
 * hdstats.h - heapdecode's reports of the whole run (the records of
 * runstats.h, up to the dump --dump selects): --stats, heaptrack_print's
 * summary per process and the top stacks by peak, allocations, temporary
 * allocations, bytes allocated and live bytes; --growth, the stacks whose
 * live bytes grew over the dumps of a log (the leak suspects); --json,
 * the same data for programs (schema: docs/OUTPUT.md, "heapdecode --json").
 */
#ifndef HEAPSNOOP_HDSTATS_H
#define HEAPSNOOP_HDSTATS_H

#include <stdio.h>

#include "model/model.h"

/* What a top list is sorted by (--sort). */
enum hd_sort {
	HD_SORT_PEAK, HD_SORT_ALLOCATIONS, HD_SORT_TEMPORARY, HD_SORT_ALLOCATED, HD_SORT_LIVE,
	HD_SORT__ALL,	/* --stats without --sort: every list */
};

/* @s's enum hd_sort value from its name; -EINVAL if none. */
int hdstats__parse_sort(const char *s, enum hd_sort *out);

/*
 * --stats: each process's totals and peak (most peak bytes first), then
 * the @top stacks of every process by @sort (all five lists for
 * HD_SORT__ALL), frames symbolized. Returns 0, or -ENOENT if the input
 * has no whole-run records (heapsnoop older than them: said on @out).
 */
int hdstats__write(struct hd_model *r, enum hd_sort sort, unsigned int top, FILE *out);

/*
 * --growth: stacks whose live bytes at the last dump exceed those at the
 * first, biggest growth first: total and per dump, and in how many of the
 * intervals between dumps they grew. Returns 0 or -ENOENT (as above).
 */
int hdstats__growth(struct hd_model *r, unsigned int top, FILE *out);

/*
 * --folded --sort KEY: one `root;...;leaf VALUE` line per symbolized
 * stack, VALUE its whole-run @sort value (heaptrack_print -F's cost
 * types). Returns 0 or -ENOMEM.
 */
int hdstats__folded(struct hd_model *r, enum hd_sort sort, FILE *out);

/* --json: one JSON object with every process and stack. 0 or -ENOMEM. */
int hdstats__json(struct hd_model *r, FILE *out);

#endif /* HEAPSNOOP_HDSTATS_H */

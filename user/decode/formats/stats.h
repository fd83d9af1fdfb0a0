/* SPDX-License-Identifier: MIT */
/*
 * stats.h - heapdecode's text reports of the whole run (the model's
 * `proc` and `stack` records up to the dump described): --stats,
 * heaptrack_print's summary per process and the top stacks by peak,
 * allocations, temporary allocations, bytes allocated and live bytes
 * (top.h); --growth, the stacks whose live bytes grew over the dumps of
 * a log (growth.h), the leak suspects.
 */
#ifndef HEAPDECODE_STATS_H
#define HEAPDECODE_STATS_H

#include <stdbool.h>
#include <stdio.h>

#include "analyses/top.h"
#include "model/model.h"

/*
 * --stats: each process's totals and peak (most peak bytes first), then
 * the @top stacks of every process by @sort (all five lists for
 * HD_SORT__ALL), frames symbolized. Returns 0, or -ENOENT if the input
 * has no whole-run records (heapsnoop older than them: said on @out),
 * -ENOMEM.
 */
int hd_stats__write(struct hd_model *m, enum hd_sort sort, unsigned int top, FILE *out);

/*
 * --report --sort KEY: the answer first, as --report's (report.h): the
 * headline naming the biggest holder by live bytes, the C runtime's own
 * left out with @runtime_apart; then, when the first stack by @sort is
 * not that holder's, a line saying whose it is ("sorted by peak: the
 * first stack below is big_table's, not the biggest holder's"); then
 * hd_stats__write()'s lists for @sort. Returns as hd_stats__write().
 */
int hd_stats__report(struct hd_model *m, enum hd_sort sort, unsigned int top, bool runtime_apart,
		     FILE *out);

/*
 * --growth: a headline naming the function whose stacks grew most
 * (holders.h), then the @top stacks that grew, biggest growth first:
 * total (KiB, MiB) and per dump, and in how many of the intervals
 * between dumps; their frames cut below main unless @full (stackview.h). Returns 0,
 * -ENOENT (as above), -EINVAL (fewer than two dumps: said on standard
 * error, with how to get more) or -ENOMEM.
 */
int hd_stats__growth(struct hd_model *m, unsigned int top, bool full, FILE *out);

#endif /* HEAPDECODE_STATS_H */

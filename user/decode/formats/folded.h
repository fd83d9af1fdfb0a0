/* SPDX-License-Identifier: MIT */
/*
 * folded.h - heapdecode --folded and --flamegraph: the live set's stacks
 * folded by their names (group.h) as `root;...;leaf VALUE` lines, the
 * format of flamegraph.pl, inferno and speedscope, or drawn as an SVG
 * flame graph (flamegraph.h); VALUE bytes, or allocations (--count),
 * signed with a baseline subtracted (then a differential flame graph).
 */
#ifndef HEAPDECODE_FOLDED_H
#define HEAPDECODE_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "analyses/top.h"
#include "model/model.h"

/* --folded: the lines to @out (@counts: allocations). */
void hd_folded__write(struct hd_model *m, bool counts, FILE *out);

/*
 * --folded --sort: the whole run's stacks, each with its @sort value
 * (top.h; 0: left out), as heaptrack_print -F writes its cost types.
 * Returns 0 or -ENOMEM.
 */
int hd_folded__sorted(struct hd_model *m, enum hd_sort sort, FILE *out);

/*
 * --flamegraph: the SVG headed @title, @width px wide (0: the default,
 * flamegraph.h), to @out; 0, -ENOMEM or -EIO.
 */
int hd_folded__flamegraph(struct hd_model *m, bool counts, const char *title, int width,
			  FILE *out);

#endif /* HEAPDECODE_FOLDED_H */

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

#include "model/model.h"

/* --folded: the lines to @out (@counts: allocations). */
void hd_folded__write(struct hd_model *m, bool counts, FILE *out);

/*
 * The same for @n stacks @v (of any table: their pid and frames) with
 * @values (0: left out), stacks that fold alike summed. Returns 0 or
 * -ENOMEM.
 */
int hd_folded__values(struct hd_model *m, struct stack *const *v, const uint64_t *values,
		      size_t n, FILE *out);

/* --flamegraph: the SVG headed @title to @out; 0, -ENOMEM or -EIO. */
int hd_folded__flamegraph(struct hd_model *m, bool counts, const char *title, FILE *out);

#endif /* HEAPDECODE_FOLDED_H */

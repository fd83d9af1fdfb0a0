/* SPDX-License-Identifier: MIT */
/*
 * rtsummary.h - what the -s summary (summary.h) says apart from the
 * program's own stacks: the C runtime's allocations (suppress__runtime():
 * stdio buffers, TLS, the dynamic loader's...), left out of the top
 * stacks and said in one line after them unless
 * --no-default-suppressions; and a Python that freed its heap at exit
 * (pyexit.h), with where to see its peak.
 */
#ifndef HEAPSNOOP_RTSUMMARY_H
#define HEAPSNOOP_RTSUMMARY_H

#include <stdio.h>

#include "suppress.h"
#include "summary.h"

/*
 * Mark the C runtime's stacks among those of the @n processes @v
 * (sum_stack's runtime), each frame named through @lookup(@ctx, ...),
 * and add them up into @all. Nothing marked unless @so asks for it.
 */
void rt_summary__mark(struct sum_proc *const *v, size_t n, suppress_lookup_fn lookup, void *ctx,
		      const struct summary_opts *so, struct suppress_tally *all);

/*
 * The lines after the top stacks, to @out (flog()'s prefix): the C
 * runtime's own, if @all holds any, then each Python process of the @n
 * @v that freed its heap at exit.
 */
void rt_summary__write(const struct suppress_tally *all, struct sum_proc *const *v, size_t n,
		       const struct summary_opts *so, FILE *out);

#endif /* HEAPSNOOP_RTSUMMARY_H */

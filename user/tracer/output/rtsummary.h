/* SPDX-License-Identifier: MIT */
/*
 * rtsummary.h - what the -s summary says apart from the program's own
 * stacks: the C runtime's allocations (suppress__runtime(): stdio
 * buffers, TLS, the dynamic loader's...), left out of the top stacks and
 * said in one line after them unless --no-default-suppressions; and a
 * Python that freed its heap at exit (pyexit.h), with where to see its
 * peak.
 */
#ifndef HEAPSNOOP_RTSUMMARY_H
#define HEAPSNOOP_RTSUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "symbolizer.h"
#include "track/trace.h"

/* How the summary is written, from the options. */
struct summary_opts {
	bool runtime_apart;	/* the C runtime's own apart: no --no-default-suppressions */
	const char *log;	/* -o FILE, NULL: standard output */
	bool full_stacks;	/* --full-stacks: no stack cut below main (stackview.h) */
};

struct rt_summary;

/*
 * The C runtime's stacks among the live ones of the @n processes @v,
 * each frame symbolized through @ft (frames not native) or @sym. NULL
 * when @so does not ask for it or memory ran out: nothing apart then.
 */
struct rt_summary *rt_summary__new(struct frametab *ft, struct proc **v, size_t n,
				   struct symbolizer *sym, const struct summary_opts *so);
void rt_summary__free(struct rt_summary *r);

/* Is stack @id of process @i (an index in rt_summary__new()'s @v) the C runtime's? */
bool rt_summary__has(const struct rt_summary *r, size_t i, uint32_t id);

/*
 * The lines after the top stacks, to @out (flog()'s prefix): the C
 * runtime's own, if @r holds any, then each Python process of the @n
 * @v that freed its heap at exit.
 */
void rt_summary__write(const struct rt_summary *r, struct proc **v, size_t n,
		       const struct summary_opts *so, FILE *out);

#endif /* HEAPSNOOP_RTSUMMARY_H */

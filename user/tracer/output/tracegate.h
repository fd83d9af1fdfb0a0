/* SPDX-License-Identifier: MIT */
/*
 * tracegate.h - heapsnoop's CI gates (--fail-on-leak, --suppressions,
 * --max-peak) on a traced run: every process that ends while traced
 * (gate__proc, from the trace's exit hook) and every process left at
 * the end (gate__finish) goes to the common gate (leakgate.h), its
 * stacks symbolized through its own mappings.
 */
#ifndef HEAPSNOOP_TRACEGATE_H
#define HEAPSNOOP_TRACEGATE_H

#include "leakgate.h"
#include "track/trace.h"

struct gate;

/*
 * The gates @o asks for (--fail-on-leak, --suppressions, --max-peak) into
 * *@out (NULL if none). Returns 0, or -EINVAL / -ENOMEM after saying why
 * (a bad suppressions file).
 */
int gate__new(const struct leakgate_opts *o, struct gate **out);
void gate__free(struct gate *g);

/* Process @p ends: its peak, and what it leaves live (NULL @g: nothing). */
void gate__proc(struct gate *g, const struct proc *p);

/*
 * The run is over with exit status @status (session.h): the processes
 * left in @t taken in, the verdict said on standard error. Returns
 * @status if it is an error or the records are incomplete (HS_EXIT_ERROR,
 * HS_EXIT_LOST: heapsnoop/exit.h), else the gate's status (HS_EXIT_LEAK,
 * HS_EXIT_PEAK) if one broke, else @status. NULL @g: @status.
 */
int gate__finish(struct gate *g, struct trace *t, int status);

#endif /* HEAPSNOOP_TRACEGATE_H */

/* SPDX-License-Identifier: MIT */
/*
 * dump.h - what heapsnoop writes: the dump of live allocations (mapping
 * records, the stacks as a tree, then one line per allocation; grammar:
 * docs/OUTPUT.md),
 * the same for one process at its exit, and the human summary: processes
 * by live bytes, then their top stacks.
 */
#ifndef HEAPSNOOP_REPORT_H
#define HEAPSNOOP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "summary.h"
#include "symbolizer.h"
#include "track/trace.h"

/*
 * Write a dump of every live allocation to @out, self-contained: a header
 * line, the `map` records of each process with records in it, its `frame`
 * and `jit` records, its stacks as a tree (`tree`, `node`), the `live`
 * lines, then each process's whole-run counts (`proc`, and `stack` for
 * the stacks whose counts changed since the last dump), noted as
 * written. @reason: "exit", "signal", "interval", "usr1".
 * Returns 0, -EIO if writing failed, or -ENOMEM (said: the dump stops
 * without its end-dump).
 */
int report__dump(struct trace *t, FILE *out, const char *reason);

/*
 * The same, written from a snapshot whose marks nobody reads again (a
 * dump's child, bgdump.h): nothing noted, no page of the snapshot copied
 * for it.
 */
int report__dump_copy(struct trace *t, FILE *out, const char *reason);

/*
 * Mark as written what report__dump() of @t would write of the whole-run
 * counts (which `stack` records the next dump repeats), without writing:
 * the dump was written by a child from a snapshot of @t taken just now
 * (bgdump.h).
 */
void report__dump_written(struct trace *t);

/*
 * The heap over time: a `sample` record (docs/OUTPUT.md) for each process
 * whose live count or bytes changed since its last one. Returns 0 or -EIO.
 */
int report__samples(struct trace *t, FILE *out);

/*
 * Write the live allocations of process @p, which has just exited, as an
 * `exit` ... `end-exit` section (its `map` records, then `live` lines).
 * Returns 0 or -EIO.
 */
int report__exit(struct trace *t, struct proc *p, FILE *out);

/*
 * The human summary of @t's processes to @out (summary.h's lines: the
 * biggest holder, then the @top stacks by live bytes, the C runtime's
 * apart with @so's runtime_apart), their frames symbolized through @sym
 * (function+offset, module, file:line), those that are not native code
 * by the trace's frame table. Each process's live stacks are copied
 * first (summary.h); out of memory, said and nothing written.
 */
void report__summary(struct trace *t, struct symbolizer *sym, FILE *out, unsigned int top,
		     const struct summary_opts *so);

#endif /* HEAPSNOOP_REPORT_H */

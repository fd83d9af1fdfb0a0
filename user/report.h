/* SPDX-License-Identifier: MIT */
/*
 * report.h - what heapsnoop writes: the dump of live allocations (mapping
 * records, then one `~m#` line per allocation; grammar: docs/OUTPUT.md)
 * and the human summary of the top stacks by live bytes.
 */
#ifndef HEAPSNOOP_REPORT_H
#define HEAPSNOOP_REPORT_H

#include <stdio.h>

#include "symbolizer.h"
#include "trace.h"

/*
 * Write a dump of every live allocation to @out, self-contained: a header
 * line, the `map` records of each process with live allocations, then the
 * `live` lines. @reason: "exit", "signal", "interval", "usr1".
 * Returns 0 or -EIO if writing failed.
 */
int report__dump(struct trace *t, FILE *out, const char *reason);

/*
 * The @top stacks by live bytes with their frames symbolized through @sym
 * (function+offset, module, file:line), to @out.
 */
void report__summary(struct trace *t, struct symbolizer *sym, FILE *out, unsigned int top);

#endif /* HEAPSNOOP_REPORT_H */

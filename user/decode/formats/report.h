/* SPDX-License-Identifier: MIT */
/*
 * report.h - heapdecode --report: a headline naming the biggest holder
 * (holders.h), then the live set's stacks, biggest first, each with its
 * size (KiB, MiB), share and allocations and its frames symbolized
 * (stackview.h: cut below main unless --full-stacks), then the total;
 * with --by pid or module, one line a key instead (group.h); with --by
 * function, one line a holding function and its callers beneath, each
 * with its share. --top N: the N biggest, the rest summed in one line.
 * Differences with a baseline subtracted.
 */
#ifndef HEAPDECODE_REPORT_H
#define HEAPDECODE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "formats/writers.h"
#include "holders.h"
#include "model/model.h"

/*
 * Write it to @out as @o asks (by, top, full_stacks); by stack with
 * @o->runtime_apart, the C runtime's own allocations left out of the
 * headline, the stacks and the total and said in a line after them
 * (analyses/runtime.h).
 */
void hd_report__write(struct hd_model *m, const struct hd_write_opts *o, FILE *out);

/*
 * The headline line of @h to @out: "@what: SIZE in N blocks, f (x.c:3) <-
 * caller (x.c:9)", or "@what: none, nothing is live" ("nothing grew"
 * with a baseline); nothing when @h is NULL (no memory).
 */
void hd_report__headline(struct hd_model *m, struct holders *h, const char *what, FILE *out);

/*
 * The live stacks' holders, the C runtime's own left out with
 * @runtime_apart (analyses/runtime.h), and their headline line written
 * to @out (as hd_report__headline). The caller frees them with
 * holders__free; NULL: no memory (nothing written).
 */
struct holders *hd_report__holders(struct hd_model *m, bool runtime_apart, FILE *out);

#endif /* HEAPDECODE_REPORT_H */

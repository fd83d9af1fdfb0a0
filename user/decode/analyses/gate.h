/* SPDX-License-Identifier: MIT */
/*
 * gate.h - heapsnoop's CI gates (leakgate.h) offline, on a log:
 * heapdecode --fail-on-leak[=BYTES], --suppressions FILE, --max-peak
 * BYTES judge the dump heapdecode describes (the last: the live set at
 * the end) and the whole-run peaks up to it, as heapsnoop judges a run;
 * with --base, the leak gate judges the growth since the baseline.
 */
#ifndef HEAPDECODE_GATE_H
#define HEAPDECODE_GATE_H

#include <stdio.h>

#include "leakgate.h"
#include "model/model.h"

/*
 * Judge @m by @o, the verdict and the stacks that broke it said on @out.
 * Returns 0, HS_EXIT_LEAK or HS_EXIT_PEAK (heapsnoop/exit.h); -ENOMEM, or
 * -EINVAL after saying why (a bad suppressions file).
 */
int hd_gate__run(struct hd_model *m, const struct leakgate_opts *o, FILE *out);

#endif /* HEAPDECODE_GATE_H */

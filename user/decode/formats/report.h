/* SPDX-License-Identifier: MIT */
/*
 * report.h - heapdecode --report: the live set's stacks, biggest first,
 * each with its bytes, share and allocations and its frames symbolized
 * (framefmt.h), then the total; with --by pid, function or module, one
 * line a key instead (group.h). Differences with a baseline subtracted.
 */
#ifndef HEAPDECODE_REPORT_H
#define HEAPDECODE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyses/group.h"
#include "model/model.h"

/*
 * Write it to @out, grouped by @by; by stack with @runtime_apart, the C
 * runtime's own allocations left out of the stacks and the total and
 * said in a line after them (analyses/runtime.h).
 */
void hd_report__write(struct hd_model *m, enum hd_by by, bool runtime_apart, FILE *out);

#endif /* HEAPDECODE_REPORT_H */

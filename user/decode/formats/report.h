/* SPDX-License-Identifier: MIT */
/*
 * report.h - heapdecode --report: the live set's stacks, biggest first,
 * each with its bytes, share and allocations and its frames symbolized
 * (framefmt.h), then the total; with --by pid, function or module, one
 * line a key instead (group.h). Differences with a baseline subtracted.
 */
#ifndef HEAPDECODE_REPORT_H
#define HEAPDECODE_REPORT_H

#include <stdio.h>

#include "analyses/group.h"
#include "model/model.h"

/* Write it to @out, grouped by @by. */
void hd_report__write(struct hd_model *m, enum hd_by by, FILE *out);

#endif /* HEAPDECODE_REPORT_H */

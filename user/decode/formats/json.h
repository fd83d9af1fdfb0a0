/* SPDX-License-Identifier: MIT */
/*
 * json.h - heapdecode --json: the whole run for programs, every process
 * (most peak bytes first) and every stack (most bytes at the peak first)
 * with every count and its frames symbolized; the dumps read, whether
 * the values are differences (--base), the sampling mean.
 */
#ifndef HEAPDECODE_JSON_H
#define HEAPDECODE_JSON_H

#include <stdio.h>

#include "model/model.h"

/* Write the object to @out. Returns 0 or -ENOMEM. */
int hd_json__write(struct hd_model *m, FILE *out);

#endif /* HEAPDECODE_JSON_H */

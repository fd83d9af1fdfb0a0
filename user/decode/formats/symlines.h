/* SPDX-License-Identifier: MIT */
/*
 * symlines.h - heapdecode -s: each line of the input copied as the
 * filter copies it (every `~m#TOKEN` as `~b#size: N, 0x..`), then each
 * record's frames symbolized on the lines after it, one a line, as
 * --report writes them (framefmt.h): a `live` or `stack` record's whole
 * stack, all its tokens' frames in turn, another program's line each
 * token's; an incomplete stack's mark, and a sampled block's estimate,
 * after its frames. Written as the input is read: the model only
 * follows the dumps, their mappings and their `frame` and `jit` records.
 */
#ifndef HEAPDECODE_SYMLINES_H
#define HEAPDECODE_SYMLINES_H

#include <stdio.h>

#include "input/logread.h"
#include "model/model.h"

/*
 * Write @l so to @out, the model following it. Returns 0, or a negative
 * hs_err: a malformed `~m#` token or record (the line written
 * unchanged).
 */
int hd_symlines__line(struct hd_model *m, const struct hd_line *l, FILE *out);

#endif /* HEAPDECODE_SYMLINES_H */

/* SPDX-License-Identifier: MIT */
/*
 * speedscope.h - heapdecode --speedscope: the live set of the dump
 * heapdecode describes in speedscope's own JSON (its file-format-spec.ts:
 * shared frames, one "sampled" profile per process, unit "bytes" so its
 * axes say bytes; folded stacks carry no unit). Frames are heapdecode's
 * symbolization: function and source file, inlined functions as frames
 * of their own, root first as speedscope wants stacks.
 * With a baseline subtracted, speedscope takes no negative weight: each
 * process gets a profile of what grew and one of what shrank.
 */
#ifndef HEAPDECODE_SPEEDSCOPE_H
#define HEAPDECODE_SPEEDSCOPE_H

#include <stdbool.h>
#include <stdio.h>

#include "model/model.h"

/*
 * Write @m's live set (bytes, or allocations with @counts) as speedscope
 * JSON named @name to @out. Returns 0 or -ENOMEM.
 */
int hd_speedscope__write(struct hd_model *m, bool counts, const char *name, FILE *out);

#endif /* HEAPDECODE_SPEEDSCOPE_H */

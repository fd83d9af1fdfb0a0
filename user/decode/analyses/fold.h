/* SPDX-License-Identifier: MIT */
/*
 * fold.h - stacks folded as flamegraph.pl's stackcollapse tools fold
 * them (--folded, --flamegraph): `root;...;leaf`, root first, each
 * stack's native frames expanded into the functions inlined there,
 * outermost first, each of those marked `_[i]` (flamegraph.pl's
 * annotation for an inlined frame), so that a leak made in a function
 * the compiler inlined (at -O2) still shows it: `main;make_rec_[i]`.
 * Stacks whose folded text is equal (they differ in addresses, in
 * processes, or only in inlining sites) are one row, their values
 * summed; with a baseline subtracted the sums are differences, signed,
 * and a key whose sums are both 0 has no row.
 */
#ifndef HEAPDECODE_FOLD_H
#define HEAPDECODE_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/group.h"
#include "model/model.h"

/*
 * The annotation flamegraph.pl gives an inlined frame's name, which
 * formats/flamegraph.c draws as such (its FLAMEGRAPH_INLINED: the folded
 * text is the contract between the two; this folder includes no format).
 */
#define HD_FOLD_INLINED "_[i]"

/*
 * Stack @s of @m folded: an incomplete stack's mark first (its root,
 * "[stack_truncated]"), "[no stack]" for none; every ';' and blank of a
 * name made '_'. Returns a malloc'ed string, or NULL: no memory.
 */
char *hd_fold__stack(struct hd_model *m, const struct stack *s);

/*
 * The live stacks of @m folded, one row per folded text, most bytes
 * first (signed); with @kinds (the flame graph's, never --folded's) each
 * frame that is not native code marked with its kind, flamegraph.h's
 * `_[python]`, `_[lua]`, `_[jit]`. Returns a malloc'ed array of *@n rows (hd_group__free),
 * or NULL: no memory.
 */
struct hd_row *hd_fold__live(struct hd_model *m, bool kinds, size_t *n);

/*
 * Any @n stacks @v with @values[i] each (0: left out) folded: rows of
 * bytes only (count 0). Returns the rows (*@nrows), or NULL: no memory.
 */
struct hd_row *hd_fold__values(struct hd_model *m, struct stack *const *v,
			       const uint64_t *values, size_t n, size_t *nrows);

#endif /* HEAPDECODE_FOLD_H */

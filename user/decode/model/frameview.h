/* SPDX-License-Identifier: MIT */
/*
 * frameview.h - heapdecode --frames KIND: the live set seen with only one
 * kind of frame, so that a Python program's report reads as a Python
 * traceback. Each stack keeps its frames of that kind (frametab.h's
 * interpreter frames: "python", "lua", or "interpreter" for any
 * interpreter's) in their order; the native frames between them are
 * dropped, and those at the leaf (the allocator's call site and what
 * called it) become one frame, FRAMEVIEW_NATIVE ("[native]"), so that
 * the bytes still have a place of their own. Stacks that are then equal
 * are one, their values summed.
 */
#ifndef HEAPDECODE_FRAMEVIEW_H
#define HEAPDECODE_FRAMEVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "records.h"
#include "stacks.h"

struct hd_model;

/* The frame that stands for a view's dropped leaf frames: no user-space address. */
#define FRAMEVIEW_NATIVE	(REC_FRAME_BASE - 1)
/* Its name. */
#define FRAMEVIEW_NATIVE_NAME	"[native]"
/* --frames's word for any interpreter's frames. */
#define FRAMEVIEW_ANY		"interpreter"

/* Is @kind a word --frames takes: FRAMEVIEW_ANY or an interpreter's kind (records.h)? */
bool frameview__valid(const char *kind);

/*
 * The @n stacks @v of @m (their frames named by hd_model__lookup()) seen
 * with only @kind's frames, as above: a new table whose stacks' live and
 * whole-run values are the sums of those they stand for (a stack cut
 * stays apart from a whole one: its flags kept).
 * Returns it (stacks__free), or NULL: no memory.
 */
struct stacks *frameview__new(struct hd_model *m, const char *kind, struct stack *const *v,
			      size_t n);

#endif /* HEAPDECODE_FRAMEVIEW_H */

/* SPDX-License-Identifier: MIT */
/*
 * flamegraph.h - a self-contained, interactive SVG flame graph from folded
 * stacks (`root;...;leaf VALUE`): hover shows a frame's name, value and
 * share; click zooms into it; "Search" highlights frames matching a regular
 * expression and shows their share. No script or file outside the SVG.
 * A URL ending in #zoom=FRAME or #search=REGEX opens with that view.
 */
#ifndef HEAPSNOOP_FLAMEGRAPH_H
#define HEAPSNOOP_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The annotation of an inlined function's frame (flamegraph.pl's): drawn
 * without it, in an aqua hue of its own, "(inlined)" on hover. A frame's
 * kind of code is annotated alike, `_[python]`, `_[lua]` (any other
 * interpreter's word: Python's hue), `_[jit]`, and drawn without it:
 * native frames warm, Python's blue-green, Lua's purple, JIT code
 * yellow-green, a legend line naming the kinds present. Each frame's <g>
 * has the class of its kind, f-native, f-inline, f-python, f-lua or
 * f-jit, beside "f" (heapdecode --html's toggle selects by them).
 */
#define FLAMEGRAPH_INLINED "_[i]"

struct folded_line {
	char *text;		/* "root;...;leaf", frames separated by ';' */
	uint64_t value;
	int64_t delta;		/* a differential graph's: growth (> 0) or
				 * shrinkage (< 0); value is then |delta| */
};

/* The graph's width in px (the SVG has 10 more on each side), unless given. */
#define FLAMEGRAPH_WIDTH 1200

/*
 * Write the SVG of @n folded lines to @out, the graph @width px wide (0:
 * FLAMEGRAPH_WIDTH). @title heads it; @unit names the values ("bytes",
 * "allocations"; bytes are said in KiB or MiB too, text.h text_size(),
 * the exact count beside). If any line has a delta, the graph
 * is differential: widths are the changes' sizes, red frames grew, blue
 * ones shrank (by their net change), and hover shows the signed change.
 * Returns 0, -ENOMEM or -EIO.
 */
int flamegraph__write(FILE *out, const struct folded_line *lines, size_t n, const char *title,
		      const char *unit, int width);

#endif /* HEAPSNOOP_FLAMEGRAPH_H */

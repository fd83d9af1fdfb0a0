/* SPDX-License-Identifier: MIT */
/*
 * timeline.h - heapdecode --timeline: the heap over time as an SVG, as
 * heaptrack's "consumed" chart: for each of the processes with the
 * highest peaks, its live bytes from the `sample` records, the peak
 * marked, and its top stacks' live bytes (from the `stack` records of each
 * dump) stacked under the total. Self-contained: no script or file
 * outside it; hovering a point or a band shows its time and bytes.
 */
#ifndef HEAPSNOOP_TIMELINE_H
#define HEAPSNOOP_TIMELINE_H

#include <stdio.h>

#include "model/model.h"

/*
 * Write the SVG of what @m took in to @out, @procs processes at most,
 * @stacks stacks each. Returns 0, -ENOENT (no whole-run records: said on
 * stderr by the caller), -ENOMEM or -EIO.
 */
int hd_timeline__write(struct hd_model *m, FILE *out, const char *title, unsigned int procs,
		  unsigned int stacks);

#endif /* HEAPSNOOP_TIMELINE_H */

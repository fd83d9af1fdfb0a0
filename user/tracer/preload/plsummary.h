/* SPDX-License-Identifier: MIT */
/*
 * plsummary.h - heapsnoop --preload's -s summary: each image's live set
 * (a snapshot of its table, livedump.h), as it ends or is dumped at the
 * run's end, handed to summary.h with its stacks and modules, so that
 * --preload writes the BPF tracer's summary lines.
 */
#ifndef HEAPSNOOP_PLSUMMARY_H
#define HEAPSNOOP_PLSUMMARY_H

#include "heapsnoop/livedump.h"
#include "output/summary.h"

/*
 * Snapshot @snap of process @comm into @s: its live blocks summed by
 * stack, each stack's frames as its records write them (@o's xlate:
 * interpreter frames named), its modules as its mappings. 0 or -ENOMEM
 * (said by the caller: the summary is then not written).
 */
int plsummary__add(struct summary *s, const struct lt_snap *snap, const char *comm,
		   struct lt_out *o);

#endif /* HEAPSNOOP_PLSUMMARY_H */

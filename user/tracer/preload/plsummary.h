/* SPDX-License-Identifier: MIT */
/*
 * plsummary.h - heapsnoop --preload's -s summary: each image's live set
 * (a snapshot of its table, livedump.h), as it ends or is dumped at the
 * run's end, handed to summary.h with its stacks and modules, so that
 * --preload writes the BPF tracer's summary lines.
 */
#ifndef HEAPSNOOP_PLSUMMARY_H
#define HEAPSNOOP_PLSUMMARY_H

#include "frametab.h"
#include "heapsnoop/livedump.h"
#include "output/summary.h"

/*
 * A Python image's peak as heapsnoop read it while it ran (its table
 * keeps none): the most live bytes of its reads, every @read_ms.
 */
struct plsum_peak {
	uint64_t bytes, count;		/* 0: not read */
	int64_t ago_ms;			/* before its end; -1: not known */
	unsigned int read_ms;
};

/*
 * Snapshot @snap of process @comm into @s: its live blocks summed by
 * stack, each stack's frames as its records write them (@o's xlate:
 * interpreter frames named), its modules as its mappings. An
 * interpreter's frame (a synthetic address @from names, plread__frames())
 * is interned into @to and written with @to's address, so that the
 * summary names it after its image, and @from's names, are gone (@from
 * NULL: frames copied as they are). @peak (NULL: none) is its peak for
 * the freed-heap line (pyexit.h), the snapshot's bytes if more. 0 or
 * -ENOMEM (said by the caller: the summary is then not written).
 */
int plsummary__add(struct summary *s, const struct lt_snap *snap, const char *comm,
		   struct lt_out *o, struct frametab *from, struct frametab *to,
		   const struct plsum_peak *peak);

#endif /* HEAPSNOOP_PLSUMMARY_H */

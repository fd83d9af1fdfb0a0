/* SPDX-License-Identifier: MIT */
/*
 * hdreport_int.h - what hdreport.c (the model: records taken in, stacks,
 * mappings, the baseline) and hdgroup.c (its grouped text outputs) share;
 * no other file includes it.
 */
#ifndef HEAPSNOOP_HDREPORT_INT_H
#define HEAPSNOOP_HDREPORT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hdreport.h"
#include "htab.h"
#include "livecount.h"
#include "stacks.h"

struct hdreport {
	struct hd_opts opts;
	struct symbolizer *sym;
	struct stacks *stacks;
	struct htab *maps;	/* pid -> struct maptree, from `map` records */
	uint64_t total_bytes, total_count;
	struct livecount lc;	/* the sums, scaled if the dump is sampled */
	/*
	 * The lines of `exit` sections (heapsnoop -a --leaks-at-exit): leaks
	 * of processes that ended, part of every later live set, so replayed
	 * after each dump header resets it.
	 */
	char **exit_lines;
	size_t nexit;
	bool in_exit, replaying;
	struct hdreport *base;	/* --base: subtracted (hdreport__subtract) */
	unsigned int ndumps;	/* dump headers taken in */
	bool done;		/* past the dump --dump names: ignore the rest */
	struct runstats *rs;
};

/* With a sampled dump, the line that says the values are estimates. */
void hdreport_say_estimated(const struct hdreport *r, FILE *out);

#endif /* HEAPSNOOP_HDREPORT_INT_H */

/* SPDX-License-Identifier: MIT */
/*
 * model_int.h - what model.c (the model: records taken in, stacks,
 * mappings, the baseline) and hdgroup.c (its grouped text outputs) share;
 * no other file includes it.
 */
#ifndef HEAPDECODE_MODEL_INT_H
#define HEAPDECODE_MODEL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "htab.h"
#include "livecount.h"
#include "stacks.h"

struct hd_model {
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
	struct hd_model *base;	/* --base: subtracted (hd_model__subtract) */
	unsigned int ndumps;	/* dump headers taken in */
	bool done;		/* past the dump --dump names: ignore the rest */
	struct runstats *rs;
};

/* With a sampled dump, the line that says the values are estimates. */
void hd_model_say_estimated(const struct hd_model *r, FILE *out);

#endif /* HEAPDECODE_MODEL_INT_H */

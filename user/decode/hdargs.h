/* SPDX-License-Identifier: MIT */
/*
 * hdargs.h - heapdecode's command line: the usage text, getopt_long's
 * table, each option's value checked, the options that go together
 * (hdargs.c). heapdecode.c runs what they ask for.
 */
#ifndef HEAPSNOOP_HDARGS_H
#define HEAPSNOOP_HDARGS_H

#include <stdbool.h>

#include "model/model.h"
#include "analyses/top.h"
#include "leakgate.h"
#include "symbolizer.h"
#include "input/tokscan.h"

struct hd_args {
	const struct tokscan_ops *ops;	/* the filter's direction */
	int group;			/* 0: filter; 's', 'R', 'F', 'G', 'T' (--stats),
					 * 'W' (--growth), 'J' (--json), 'L'
					 * (--timeline), 'Y' (--massif), 'O'
					 * (--pprof), 'Z' (--speedscope): grouping */
	const char *svg_path;		/* --flamegraph, --timeline, --massif,
					 * --pprof, --speedscope; "-": stdout */
	enum hd_sort sort;		/* --sort, HD_SORT__ALL: none */
	const char *base_file;		/* --base */
	unsigned int base_dump;		/* --base-dump, 0: the base's last */
	bool base;			/* --base or --base-dump given */
	bool all_dumps;			/* --dump all (--report, --folded) */
	unsigned int top;		/* --top */
	bool gating;			/* --fail-on-leak or --max-peak */
	struct leakgate_opts gate;
	struct hd_opts ho;
	struct symbolizer_opts so;
};

/*
 * Fill @a from @argv (getopt_long; the files to read start at optind).
 * Returns 0 to go on, 1 after --help or --version (printed), 2 (the exit
 * status) after saying what is wrong with an option.
 */
int hd_args__parse(int argc, char **argv, struct hd_args *a);

#endif /* HEAPSNOOP_HDARGS_H */

/* SPDX-License-Identifier: MIT */
/*
 * hdargs.h - heapdecode's command line: the usage text, getopt_long's
 * table, each option's value checked, the options that go together
 * (hdargs.c). heapdecode.c runs what they ask for.
 */
#ifndef HEAPSNOOP_HDARGS_H
#define HEAPSNOOP_HDARGS_H

#include <stdbool.h>

#include "formats/writers.h"
#include "input/tokscan.h"
#include "leakgate.h"
#include "model/model.h"
#include "symbolizer.h"

struct hd_args {
	const struct tokscan_ops *ops;	/* the filter's direction */
	enum hd_output output;		/* the writer; HD_OUT_NONE: the filter
					 * (or the gates alone) */
	const char *base_file;		/* --base */
	unsigned int base_dump;		/* --base-dump, 0: the base's last */
	bool base;			/* --base or --base-dump given */
	bool all_dumps;			/* --dump all (--report, --folded) */
	bool gating;			/* --fail-on-leak or --max-peak */
	struct leakgate_opts gate;
	struct hd_model_opts mo;
	struct hd_write_opts wo;
	struct symbolizer_opts so;
};

/*
 * Fill @a from @argv (getopt_long; the files to read start at optind).
 * Returns 0 to go on, 1 after --help or --version (printed), HD_EXIT_ERROR
 * (the exit status, heapsnoop/exit.h) after saying what is wrong with an
 * option.
 */
int hd_args__parse(int argc, char **argv, struct hd_args *a);

#endif /* HEAPSNOOP_HDARGS_H */

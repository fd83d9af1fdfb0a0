/* SPDX-License-Identifier: MIT */
/*
 * writers.h - heapdecode's outputs as a table: for each, the option that
 * picks it and the function that writes it from the model (model.h),
 * which is all a writer reads. The command line (hdargs.c) takes the
 * options from here, heapdecode.c runs the writer chosen.
 */
#ifndef HEAPDECODE_WRITERS_H
#define HEAPDECODE_WRITERS_H

#include <stdbool.h>
#include <stdio.h>

#include "analyses/group.h"
#include "analyses/top.h"
#include "input/logread.h"
#include "model/model.h"

/* Which output: one a run. */
enum hd_output {
	HD_OUT_NONE,		/* no writer: the filter, or the gates alone */
	HD_OUT_SYMBOLIZE,	/* -s */
	HD_OUT_REPORT,		/* --report */
	HD_OUT_FOLDED,		/* --folded */
	HD_OUT_FLAMEGRAPH,	/* --flamegraph FILE */
	HD_OUT_STATS,		/* --stats */
	HD_OUT_GROWTH,		/* --growth */
	HD_OUT_JSON,		/* --json */
	HD_OUT_TIMELINE,	/* --timeline FILE */
	HD_OUT_MASSIF,		/* --massif FILE */
	HD_OUT_PPROF,		/* --pprof FILE */
	HD_OUT_SPEEDSCOPE,	/* --speedscope FILE */
	HD_OUT_HTML,		/* --html FILE */
	HD_OUT__N
};

/* The options the writers share. */
struct hd_write_opts {
	enum hd_by by;		/* --by (--report, --pprof) */
	bool counts;		/* --count: allocations, not bytes */
	enum hd_sort sort;	/* --sort, HD_SORT__ALL: none */
	unsigned int top;	/* --top */
	int width;		/* --width: the flame graph's px, 0: its default
				 * (--html: the window's) */
	bool top_set;		/* --top given: --report shows only as many */
	bool full_stacks;	/* --full-stacks: no frame of a report cut */
	const char *path;	/* a writer's FILE; "-": standard output */
	const char *input;	/* the last input's name (titles), "stdin" */
	bool runtime_apart;	/* --report: the C runtime's own said apart (runtime.h) */
};

struct hd_writer {
	const char *option;	/* the long option that picks it, its name */
	bool to_file;		/* --OPTION FILE, else standard output */
	/*
	 * A FILE holding this is one file per process, which the writer
	 * opens itself (its @out is then NULL); NULL: never.
	 */
	const char *pattern;
	/*
	 * Write @m to @out, once the input is read (and a baseline
	 * subtracted). Returns 0, or a negative errno after saying what
	 * failed where there is something to say: the exit status is 2.
	 */
	int (*write)(struct hd_model *m, const struct hd_write_opts *o, FILE *out);
	/*
	 * Or: write each line as it is read, the model following it (-s).
	 * Returns 0 or a negative hs_err (a malformed line: logread.h).
	 */
	int (*line)(struct hd_model *m, const struct hd_line *l, FILE *out);
};

/* The writer of @o; NULL for HD_OUT_NONE. */
const struct hd_writer *hd_writer__of(enum hd_output o);

#endif /* HEAPDECODE_WRITERS_H */

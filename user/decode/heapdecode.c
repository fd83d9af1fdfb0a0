// SPDX-License-Identifier: MIT
/*
 * heapdecode - turn `~m#` allocation records in any text into `~b#` lines
 * (and back with --encode). Streams: constant memory, any line length.
 *
 * Format: docs/FORMAT.md. Exit status: 0, 1 if any token was malformed
 * (those lines are copied unchanged), 2 on a usage or I/O error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapsnoop/codec.h"
#include "hdargs.h"
#include "analyses/gate.h"
#include "model/model.h"
#include "formats/json.h"
#include "formats/stats.h"
#include "formats/massif.h"
#include "msg.h"
#include "outfile.h"
#include "formats/folded.h"
#include "formats/pprof/pprof.h"
#include "formats/report.h"
#include "formats/speedscope.h"
#include "formats/symlines.h"
#include "input/recconv.h"
#include "symbolizer.h"
#include "formats/timeline.h"
#include "input/logread.h"
#include "input/tokscan.h"


/* Each line into the model (grouping modes). */
static int take_line(void *ctx, const struct hd_line *l)
{
	return hd_model__take(ctx, l);
}

/* -s: each line written, its frames symbolized, as it is read. */
static int symbolize_line(void *ctx, const struct hd_line *l)
{
	return hd_symlines__line(ctx, l, stdout);
}

/*
 * --flamegraph, --timeline ('L'), --massif ('Y'), --pprof ('O') or
 * --speedscope ('Z') into
 * @out, opened before the input was read (outfile.h) and truncated only
 * now (NULL: standard output, for "-"); -1 after saying why.
 */
static int write_svg(struct hd_model *r, int mode, struct outfile *out, const char *path,
		     const char *input)
{
	FILE *f = out ? outfile__start(out) : stdout;
	char title[512];
	int err;

	if (!f)
		return -1;
	if (mode == 'O') {
		struct pprof_opts po = { .pid_root = hd_model__by(r) == HD_BY_PID };

		if (!out && strstr(path, "%p"))
			return pprof__write_each(r, &po, path);
		err = pprof__write(r, &po, f);
		if (err)
			elog("writing %s failed: %s", path, strerror(-err));
		return err ? -1 : 0;
	}
	if (mode == 'Z') {
		err = speedscope__write(r, f, input);
		if (err)
			elog("writing %s failed: %s", path, strerror(-err));
		return err ? -1 : 0;
	}
	snprintf(title, sizeof(title), "%s: %s", mode == 'L' ? "Heap over time" :
		 hd_model__is_diff(r) ? "Live heap, change from the baseline" : "Live heap", input);
	if (mode == 'L')
		err = timeline__svg(r, f, title, 4, 5);
	else if (mode == 'Y')
		err = massif__write(r, f);
	else
		err = hd_folded__flamegraph(r, hd_model__counts(r), title, f);
	if (err == -ENOENT)
		elog("%s: no whole-run records (sample, proc, stack) in the input", path);
	else if (err)
		elog("writing %s failed", path);
	return err ? -1 : 0;
}

/* What the command line asks for. */

/*
 * The grouped output @a asks for, of everything @r took in, to standard
 * output or @out (the SVG or massif file); 0 or 2.
 */
static int write_grouped(struct hd_model *r, const struct hd_args *a, struct outfile *out,
			 const char *input)
{
	switch (a->group) {
	case 'R':
		if (a->sort != HD_SORT__ALL)
			return hd_stats__write(r, a->sort, a->top, stdout) == -ENOMEM ? 2 : 0;
		hd_report__write(r, hd_model__by(r), stdout);
		return 0;
	case 'F':
		if (a->sort != HD_SORT__ALL)
			return hd_folded__sorted(r, a->sort, stdout) ? 2 : 0;
		hd_folded__write(r, hd_model__counts(r), stdout);
		return 0;
	case 'G': case 'L': case 'Y': case 'O': case 'Z':
		return write_svg(r, a->group, out, a->svg_path, input) ? 2 : 0;
	case 'T':
		return hd_stats__write(r, a->sort, a->top, stdout) == -ENOMEM ? 2 : 0;
	case 'W':
		return hd_stats__growth(r, a->top, stdout) == -ENOMEM ? 2 : 0;
	case 'J':
		return hd_json__write(r, stdout) ? 2 : 0;
	default:
		return 0;
	}
}

/* Feed @files (standard input if none) to @r; 0, or 2 if one failed. */
static int group_files(struct hd_model *r, char **files, int nfiles, bool stream,
		       unsigned long *malformed)
{
	return hd_input__lines(files, nfiles, stream ? symbolize_line : take_line, r,
			       stream ? stdout : NULL, malformed) ? 2 : 0;
}

/*
 * --base FILE or --base-dump N: the baseline, read from FILE (its last
 * dump, or --base-dump's) or from the input again; NULL on error (said).
 */
static struct hd_model *read_base(const struct hd_args *a, struct symbolizer *sym, char **files,
				  int nfiles, unsigned long *malformed)
{
	struct hd_opts bo = a->ho;
	struct hd_model *base;
	char *base_file = (char *)a->base_file;

	if (!a->base_file && !nfiles) {
		elog("--base-dump reads the input twice: give it as a FILE, not standard input");
		return NULL;
	}
	bo.dump = a->base_dump;
	base = hd_model__new(&bo, sym);
	if (!base) {
		elog("out of memory");
		return NULL;
	}
	if (a->base_file ? group_files(base, &base_file, 1, false, malformed)
			 : group_files(base, files, nfiles, false, malformed)) {
		hd_model__free(base);
		return NULL;
	}
	return base;
}

/* --dump all: a heading, then dump @r's report, as --report or --folded. */
static void write_each(struct hd_model *r, void *ctx)
{
	const struct hd_args *a = ctx;
	unsigned int n;
	const int64_t *t = hd_model__dump_times(r, &n);

	printf("== dump %u at %" PRId64 ".%03d\n", n, t[n] / 1000, (int)(t[n] % 1000));
	if (a->group == 'F')
		hd_folded__write(r, hd_model__counts(r), stdout);
	else
		hd_report__write(r, hd_model__by(r), stdout);
}

static int run_grouping(const struct hd_args *a, char **files, int nfiles)
{
	struct symbolizer *sym = NULL;
	struct hd_opts ho = a->ho;
	struct hd_model *r, *base = NULL;
	struct outfile *out = NULL;
	unsigned long malformed = 0;
	int status = 0, gate = 0;

	/* Opened first (a path that cannot be written fails at once), truncated last. */
	/* --pprof FILE with %p: a file per process, opened once they are known. */
	if (a->svg_path && strcmp(a->svg_path, "-") &&
	    !(a->group == 'O' && strstr(a->svg_path, "%p")) && !(out = outfile__open(a->svg_path)))
		return 2;
	if (a->all_dumps) {
		ho.each_dump = write_each;
		ho.ctx = (void *)a;
	}
	sym = symbolizer__new(&a->so);
	r = sym ? hd_model__new(&ho, sym) : NULL;
	if (!r) {
		elog("out of memory");
		symbolizer__free(sym);
		outfile__close(out);
		return 2;
	}
	status = group_files(r, files, nfiles, a->group == 's', &malformed);
	if (a->all_dumps && !status)
		write_each(r, (void *)a);	/* the last dump */
	if (!status && a->base) {
		base = read_base(a, sym, files, nfiles, &malformed);
		if (!base)
			status = 2;
		else if (hd_model__subtract(r, base)) {
			elog("out of memory");
			status = 2;
		}
	}
	/* An input unread: the SVG is not written. */
	if (!status && !a->all_dumps && write_grouped(r, a, out, nfiles ? files[nfiles - 1] : "stdin"))
		status = 2;
	if (!status && a->gating) {
		gate = hd_gate__run(r, &a->gate, stderr);
		if (gate == -ENOMEM)
			elog("out of memory");
		status = gate < 0 ? 2 : 0;
	}
	if (outfile__close(out))
		status = 2;
	if (fflush(stdout) == EOF)
		status = 2;
	hd_model__free(r);
	hd_model__free(base);
	symbolizer__free(sym);
	if (!status && malformed) {
		elog("%lu malformed record(s) ignored%s", malformed,
		     gate > 0 ? ": the gate's verdict is not trusted" : "");
		status = 1;
	}
	return status ? status : gate;
}

/* The default mode: every file through the scanner to standard output. */
static int run_filter(const struct tokscan_ops *ops, char **files, int nfiles)
{
	struct tokscan *ts = tokscan__new(ops, NULL, stdout, true);
	int status = 0;

	if (!ts) {
		elog("out of memory");
		return 2;
	}
	if (nfiles == 0 && hd_input__scan(ts, "-"))
		status = 2;
	for (int i = 0; i < nfiles; i++)
		if (hd_input__scan(ts, files[i]))
			status = 2;
	if (fflush(stdout) == EOF) {
		elog("error writing output: %s", strerror(errno));
		status = 2;
	}
	if (!status && tokscan__malformed(ts)) {
		elog("%lu malformed record(s) left unchanged", tokscan__malformed(ts));
		status = 1;
	}
	tokscan__free(ts);
	return status;
}

int main(int argc, char **argv)
{
	static char obuf[1 << 18];
	struct hd_args a;
	int err;

	msg_init("heapdecode");
	err = hd_args__parse(argc, argv, &a);
	if (err)
		return err == 1 ? 0 : err;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (a.group)
		return run_grouping(&a, argv + optind, argc - optind);
	return run_filter(a.ops, argv + optind, argc - optind);
}

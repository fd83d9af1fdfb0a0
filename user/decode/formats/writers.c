// SPDX-License-Identifier: MIT
/*
 * writers.c - the table of heapdecode's outputs (see writers.h): each
 * entry's options handed to its format, and its failures said. What the
 * formats write is docs/OUTPUT.md's "What heapdecode writes".
 */
#include <errno.h>
#include <string.h>

#include "heapsnoop/codec.h"

#include "analyses/runtime.h"
#include "formats/folded.h"
#include "formats/html.h"
#include "formats/json.h"
#include "formats/massif.h"
#include "formats/pprof/pprof.h"
#include "formats/report.h"
#include "formats/speedscope.h"
#include "formats/stats.h"
#include "formats/symlines.h"
#include "formats/timeline.h"
#include "formats/writers.h"
#include "msg.h"

/*
 * A file format's failure @err (a negative errno or hs_err: one space,
 * include/heapsnoop/codec.h) said, naming its FILE @path; returns @err.
 * -ENOENT is a format's "no whole-run records (sample, proc, stack)".
 */
static int file_failed(const char *path, int err)
{
	if (err == -ENOENT)
		elog("%s: no whole-run records (sample, proc, stack) in the input", path);
	else if (err)
		elog("writing %s failed: %s", path, hs_strerror(err));
	return err;
}

static int write_symbolized(struct hd_model *m, const struct hd_line *l, FILE *out)
{
	return hd_symlines__line(m, l, out);
}

static int write_stats(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	int err = hd_stats__write(m, o->sort, o->top, out);

	/* No whole-run records is said in the report, and no failure. */
	return err == -ENOMEM ? err : 0;
}

static int write_report(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	/* --report --sort KEY: the headline, then the top stacks by KEY, as --stats --sort KEY. */
	if (o->sort != HD_SORT__ALL) {
		int err = hd_stats__report(m, o->sort, o->top, o->runtime_apart, out);

		return err == -ENOMEM ? err : 0;
	}
	hd_report__write(m, o, out);
	hd_runtime__python(m, o->input, out);
	return 0;
}

static int write_folded(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	if (o->sort != HD_SORT__ALL)
		return hd_folded__sorted(m, o->sort, out);
	hd_folded__write(m, o->counts, out);
	return 0;
}

static int write_flamegraph(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	char title[512];

	snprintf(title, sizeof(title), "%s: %s", hd_model__is_diff(m) ?
		 "Live heap, change from the baseline" : "Live heap", o->input);
	return file_failed(o->path, hd_folded__flamegraph(m, o->counts, title, o->width, out));
}

static int write_growth(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	int err = hd_stats__growth(m, o->top, o->full_stacks, out);

	/* No whole-run records: said on the output; one dump: said, an error. */
	return err == -ENOMEM || err == -EINVAL ? err : 0;
}

static int write_json(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	(void)o;
	return hd_json__write(m, out);
}

static int write_timeline(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	char title[512];

	/* The 4 processes with the highest peaks, their 5 top stacks each. */
	snprintf(title, sizeof(title), "%s: %s", "Heap over time", o->input);
	return file_failed(o->path, hd_timeline__write(m, out, title, 4, 5));
}

static int write_massif(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	return file_failed(o->path, hd_massif__write(m, out));
}

static int write_pprof(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	struct hd_pprof_opts po = { .pid_root = o->by == HD_BY_PID };

	/* A FILE with %p: one profile per process (hd_pprof__write_each says why not). */
	if (!out)
		return hd_pprof__write_each(m, &po, o->path) ? -EIO : 0;
	return file_failed(o->path, hd_pprof__write(m, &po, out));
}

static int write_speedscope(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	return file_failed(o->path, hd_speedscope__write(m, o->counts, o->input, out));
}

static int write_html(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	return file_failed(o->path, hd_html__write(m, o, out));
}

static const struct hd_writer writers[HD_OUT__N] = {
	[HD_OUT_SYMBOLIZE] = { "symbolize", .line = write_symbolized },
	[HD_OUT_REPORT] = { "report", .write = write_report },
	[HD_OUT_FOLDED] = { "folded", .write = write_folded },
	[HD_OUT_FLAMEGRAPH] = { "flamegraph", true, .write = write_flamegraph },
	[HD_OUT_STATS] = { "stats", .write = write_stats },
	[HD_OUT_GROWTH] = { "growth", .write = write_growth },
	[HD_OUT_JSON] = { "json", .write = write_json },
	[HD_OUT_TIMELINE] = { "timeline", true, .write = write_timeline },
	[HD_OUT_MASSIF] = { "massif", true, .write = write_massif },
	[HD_OUT_PPROF] = { "pprof", true, "%p", .write = write_pprof },
	[HD_OUT_SPEEDSCOPE] = { "speedscope", true, .write = write_speedscope },
	[HD_OUT_HTML] = { "html", true, .write = write_html },
};

const struct hd_writer *hd_writer__of(enum hd_output o)
{
	return o > HD_OUT_NONE && o < HD_OUT__N ? &writers[o] : NULL;
}

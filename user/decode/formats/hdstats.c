// SPDX-License-Identifier: MIT
/*
 * hdstats.c - --stats, --growth and --json (see hdstats.h). The sections
 * and their order follow heaptrack_print's default output: most calls,
 * peak consumers, temporary allocations, then bytes allocated and what is
 * live (leaked) at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/folded.h"
#include "formats/hdstats.h"
#include "formats/textout.h"
#include "text.h"

static const char *const sort_names[] = {
	[HD_SORT_PEAK] = "peak", [HD_SORT_ALLOCATIONS] = "allocations",
	[HD_SORT_TEMPORARY] = "temporary", [HD_SORT_ALLOCATED] = "allocated",
	[HD_SORT_LIVE] = "live",
};

int hdstats__parse_sort(const char *s, enum hd_sort *out)
{
	for (size_t i = 0; i < HD_SORT__ALL; i++) {
		if (!strcmp(s, sort_names[i])) {
			*out = (enum hd_sort)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Stack @s's value for @sort, and the count that goes with it. */
static uint64_t key_of(const struct stack *s, enum hd_sort sort, uint64_t *count)
{
	switch (sort) {
	case HD_SORT_PEAK:
		*count = s->peak_count;
		return s->peak_bytes;
	case HD_SORT_ALLOCATIONS:
		*count = s->alloc_bytes;
		return s->allocs;
	case HD_SORT_TEMPORARY:
		*count = s->allocs;
		return s->temporary;
	case HD_SORT_ALLOCATED:
		*count = s->allocs;
		return s->alloc_bytes;
	default:
		*count = s->live_count;
		return s->live_bytes;
	}
}

/* qsort_r: by the enum hd_sort @ctx points to, biggest first. */
static int by_key_desc(const void *a, const void *b, void *ctx)
{
	const struct stack *x = *(struct stack *const *)a, *y = *(struct stack *const *)b;
	enum hd_sort sort = *(const enum hd_sort *)ctx;
	uint64_t cx, cy, kx = key_of(x, sort, &cx), ky = key_of(y, sort, &cy);

	/* Signed: with --base these are differences. */
	if (kx != ky)
		return (int64_t)kx < (int64_t)ky ? 1 : -1;
	if (cx != cy)
		return (int64_t)cx < (int64_t)cy ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* "YYYY-MM-DD HH:MM:SS.mmm" (UTC) of @ms since the epoch. */
static void format_time(int64_t ms, char *buf, size_t cap)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static void write_stack(struct hd_model *r, const struct stack *s, FILE *out)
{
	for (uint32_t k = 0; k < s->depth; k++)
		hd_textout__frame(r, "      ", s->pid, k, s->frames[k], out);
}

static void write_top(struct hd_model *r, struct stack **v, size_t n, enum hd_sort sort,
		      unsigned int top, FILE *out)
{
	static const char *const titles[] = {
		[HD_SORT_PEAK] = "peak consumers (live at the process's peak)",
		[HD_SORT_ALLOCATIONS] = "most calls to allocation functions",
		[HD_SORT_TEMPORARY] = "most temporary allocations",
		[HD_SORT_ALLOCATED] = "most bytes allocated",
		[HD_SORT_LIVE] = "most live bytes (leaked, at the end)",
	};
	unsigned int shown = 0;
	char a[32], b[32];

	qsort_r(v, n, sizeof(*v), by_key_desc, &sort);
	fprintf(out, "%s:\n", titles[sort]);
	for (size_t i = 0; i < n && shown < top; i++) {
		const struct stack *s = v[i];
		uint64_t c, k = key_of(s, sort, &c);

		if ((int64_t)k <= 0)
			break;	/* with --base: the rest shrank or did not change */
		shown++;
		hd_textout__num(r, k, a);
		hd_textout__num(r, c, b);
		switch (sort) {
		case HD_SORT_PEAK:
			fprintf(out, "  %s bytes in %s allocations at the peak", a, b);
			break;
		case HD_SORT_ALLOCATIONS:
			fprintf(out, "  %s allocations of %s bytes", a, b);
			break;
		case HD_SORT_TEMPORARY:
			fprintf(out, "  %s temporary of %s allocations", a, b);
			break;
		case HD_SORT_ALLOCATED:
			fprintf(out, "  %s bytes allocated in %s allocations", a, b);
			break;
		default:
			fprintf(out, "  %s bytes live in %s allocations", a, b);
			break;
		}
		fprintf(out, " from pid %u:\n", s->pid);
		write_stack(r, s, out);
	}
	if (!shown)
		fputs("  none\n", out);
}

int hdstats__write(struct hd_model *r, enum hd_sort sort, unsigned int top, FILE *out)
{
	size_t np, ns;
	struct rs_proc **procs = hd_model__procs(r, &np);
	static const enum hd_sort order[] = { HD_SORT_ALLOCATIONS, HD_SORT_PEAK,
					      HD_SORT_TEMPORARY, HD_SORT_ALLOCATED,
					      HD_SORT_LIVE };
	struct stack **v;
	char when[64], n1[32], n2[32], n3[32], n4[32];

	if (!procs || !np) {
		fputs("no whole-run records (proc, stack) in the input: heapsnoop writes them "
		      "in every dump since they were added\n", out);
		return -ENOENT;
	}
	if (hd_model__sample_bytes(r))
		fprintf(out, "estimated: a sample by bytes, one per %" PRIu64 " bytes on average; "
			"bytes (allocated, live, at the peak) are estimates, counts are of the "
			"sampled allocations\n", hd_model__sample_bytes(r));
	for (size_t i = 0; i < np; i++) {
		const struct rs_proc *p = procs[i];

		format_time(p->peak_time_ms, when, sizeof(when));
		fprintf(out, "pid %d (%s): peak %s bytes in %s allocations at %s (%" PRId64
			".%03d)\n", p->pid, p->comm[0] ? p->comm : "?", hd_textout__num(r, p->peak, n1),
			hd_textout__num(r, p->peak_count, n2), when, p->peak_time_ms / 1000,
			(int)(p->peak_time_ms % 1000));
		fprintf(out, "  %s allocations, %s bytes allocated, %s frees, %s temporary "
			"allocations\n", hd_textout__num(r, p->allocs, n1),
			hd_textout__num(r, p->allocated, n2), hd_textout__num(r, p->frees, n3),
			hd_textout__num(r, p->temporary, n4));
		fprintf(out, "  live at the end: %s bytes in %s allocations\n",
			hd_textout__num(r, p->bytes, n1), hd_textout__num(r, p->live, n2));
	}
	v = hd_model__run_stacks(r, &ns);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (sort != HD_SORT__ALL && order[i] != sort)
			continue;
		fputc('\n', out);
		write_top(r, v, ns, order[i], top, out);
	}
	free(v);
	return 0;
}

int hdstats__folded(struct hd_model *r, enum hd_sort sort, FILE *out)
{
	size_t ns;
	struct stack **v = hd_model__run_stacks(r, &ns);
	uint64_t *values = v ? calloc(ns ? ns : 1, sizeof(*values)) : NULL, c;
	int err = -ENOMEM;

	if (values) {
		for (size_t i = 0; i < ns; i++)
			values[i] = key_of(v[i], sort, &c);
		err = hd_folded__values(r, v, values, ns, out);
	}
	free(values);
	free(v);
	return err;
}

/* A stack's growth over the dumps of a log. */
struct growth {
	const struct stack *s;
	int64_t bytes, count;		/* last dump minus first */
	unsigned int grew, intervals;	/* intervals in which it grew */
};

static int by_growth(const void *a, const void *b)
{
	const struct growth *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* Stack @id's growth over dumps 1..@ndumps from its history. */
static struct growth growth_of(struct hd_model *r, size_t id, const struct stack *s,
			       unsigned int ndumps)
{
	struct growth g = { .s = s, .intervals = ndumps ? ndumps - 1 : 0 };
	size_t n;
	const struct rs_point *h = hd_model__history(r, id, &n);
	uint64_t first_b = 0, first_c = 0, prev = 0, last_b = 0, last_c = 0;

	/* Before its first record a stack held nothing; then each holds until the next. */
	for (size_t i = 0; i < n; i++) {
		if (h[i].dump <= 1) {
			first_b = h[i].live_bytes;
			first_c = h[i].live_count;
		} else if (h[i].live_bytes > prev) {
			g.grew++;
		}
		prev = last_b = h[i].live_bytes;
		last_c = h[i].live_count;
	}
	g.bytes = (int64_t)(last_b - first_b);
	g.count = (int64_t)(last_c - first_c);
	return g;
}

int hdstats__growth(struct hd_model *r, unsigned int top, FILE *out)
{
	unsigned int ndumps = hd_model__dumps(r);
	size_t ns, k = 0;
	struct stack **v = hd_model__run_stacks(r, &ns);
	struct growth *g = v ? calloc(ns ? ns : 1, sizeof(*g)) : NULL;

	if (!g) {
		free(v);
		return -ENOMEM;
	}
	if (!ns) {
		fputs("no whole-run records (stack) in the input\n", out);
		free(v);
		free(g);
		return -ENOENT;
	}
	for (size_t i = 0; i < ns; i++) {
		g[k] = growth_of(r, i, v[i], ndumps);
		if (g[k].bytes > 0)
			k++;
	}
	qsort(g, k, sizeof(*g), by_growth);
	if (hd_model__sample_bytes(r))
		fprintf(out, "estimated: a sample by bytes, one per %" PRIu64 " bytes on average; "
			"bytes are estimates, counts are of the sampled allocations\n",
			hd_model__sample_bytes(r));
	fprintf(out, "stacks whose live bytes grew over %u dumps (%u intervals), biggest first:\n",
		ndumps, ndumps ? ndumps - 1 : 0);
	for (size_t i = 0; i < k && i < top; i++) {
		fprintf(out, "  +%" PRId64 " bytes (%+" PRId64 " allocations), %+.1f bytes per dump, "
			"grew in %u of %u intervals, from pid %u:\n", g[i].bytes, g[i].count,
			g[i].intervals ? (double)g[i].bytes / g[i].intervals : 0.0, g[i].grew,
			g[i].intervals, g[i].s->pid);
		write_stack(r, g[i].s, out);
	}
	if (!k)
		fputs("  none\n", out);
	free(v);
	free(g);
	return 0;
}

static void json_frames(struct hd_model *r, const struct stack *s, FILE *out)
{
	fputs("\"frames\": [", out);
	for (uint32_t k = 0; k < s->depth; k++) {
		struct sym_frame f;

		hd_model__lookup(r, s->pid, s->frames[k], &f);
		fprintf(out, "%s{\"addr\": \"%#" PRIx64 "\", \"function\": ", k ? ", " : "",
			s->frames[k]);
		json_string(out, f.status == SYM_OK ? f.func : NULL);
		fputs(", \"file\": ", out);
		json_string(out, f.file);
		fprintf(out, ", \"line\": %d, \"module\": ", f.line);
		json_string(out, f.module);
		fputc('}', out);
	}
	fputc(']', out);
}

int hdstats__json(struct hd_model *r, FILE *out)
{
	size_t np, ns;
	struct rs_proc **procs = hd_model__procs(r, &np);
	struct stack **v = hd_model__run_stacks(r, &ns);

	if (!v || (!procs && np)) {
		free(v);
		return -ENOMEM;
	}
	/* Signed: with --base, every count is a difference. */
	fprintf(out, "{\"dumps\": %u, \"diff\": %s, \"sample_bytes\": %" PRIu64
		", \"processes\": [", hd_model__dumps(r), hd_model__is_diff(r) ? "true" : "false",
		hd_model__sample_bytes(r));
	for (size_t i = 0; i < np; i++) {
		const struct rs_proc *p = procs[i];

		fprintf(out, "%s\n  {\"pid\": %d, \"comm\": ", i ? "," : "", p->pid);
		json_string(out, p->comm);
		fprintf(out, ", \"peak_bytes\": %" PRId64 ", \"peak_count\": %" PRId64
			", \"peak_time\": %" PRId64 ".%03d, \"allocations\": %" PRId64
			", \"allocated_bytes\": %" PRId64 ", \"frees\": %" PRId64
			", \"temporary\": %" PRId64 ", \"live_bytes\": %" PRId64
			", \"live_count\": %" PRId64 "}", p->peak, p->peak_count,
			p->peak_time_ms / 1000, (int)(p->peak_time_ms % 1000), p->allocs,
			p->allocated, p->frees, p->temporary, p->bytes, p->live);
	}
	fputs("\n], \"stacks\": [", out);
	qsort_r(v, ns, sizeof(*v), by_key_desc, &(enum hd_sort){ HD_SORT_PEAK });
	for (size_t i = 0; i < ns; i++) {
		const struct stack *s = v[i];

		fprintf(out, "%s\n  {\"pid\": %u, ", i ? "," : "", s->pid);
		json_frames(r, s, out);
		fprintf(out, ", \"live_bytes\": %" PRId64 ", \"live_count\": %" PRId64
			", \"allocations\": %" PRId64 ", \"allocated_bytes\": %" PRId64
			", \"frees\": %" PRId64 ", \"temporary\": %" PRId64
			", \"peak_bytes\": %" PRId64 ", \"peak_count\": %" PRId64 "}",
			s->live_bytes, s->live_count, s->allocs, s->alloc_bytes, s->frees,
			s->temporary, s->peak_bytes, s->peak_count);
	}
	fputs("\n]}\n", out);
	free(v);
	return 0;
}

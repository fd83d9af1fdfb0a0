// SPDX-License-Identifier: MIT
/*
 * stats.c - --stats and --growth (see stats.h). The sections
 * and their order follow heaptrack_print's default output: most calls,
 * peak consumers, temporary allocations, then bytes allocated and what is
 * live (leaked) at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/group.h"
#include "analyses/growth.h"
#include "analyses/runtime.h"
#include "analyses/top.h"
#include "formats/report.h"
#include "formats/stats.h"
#include "formats/textout.h"
#include "framefmt.h"
#include "holders.h"
#include "msg.h"
#include "text.h"

/* "YYYY-MM-DD HH:MM:SS.mmm" (UTC) of @ms since the epoch. */
static void format_time(int64_t ms, char *buf, size_t cap)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static void write_stack(struct hd_model *m, const struct stack *s, FILE *out)
{
	for (uint32_t k = 0; k < s->depth; k++)
		hd_textout__frame(m, "      ", s->pid, k, s->frames[k], out);
	if (*framefmt__cut(s->flags))
		fprintf(out, "      (%s)\n", framefmt__cut(s->flags));
}

static void write_top(struct hd_model *m, struct stack **v, size_t n, enum hd_sort sort,
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

	hd_top__sort(v, n, sort);
	fprintf(out, "%s:\n", titles[sort]);
	for (size_t i = 0; i < n && shown < top; i++) {
		const struct stack *s = v[i];
		uint64_t c, k = hd_top__value(s, sort, &c);

		if ((int64_t)k <= 0)
			break;	/* with --base: the rest shrank or did not change */
		shown++;
		hd_textout__num(m, k, a);
		hd_textout__num(m, c, b);
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
		write_stack(m, s, out);
	}
	if (!shown)
		fputs("  none\n", out);
}

int hd_stats__write(struct hd_model *m, enum hd_sort sort, unsigned int top, FILE *out)
{
	size_t np, ns;
	struct rs_proc **procs = hd_model__procs(m, &np);
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
	if (hd_model__sample_bytes(m))
		fprintf(out, "estimated: a sample by bytes, one per %" PRIu64 " bytes on average; "
			"bytes (allocated, live, at the peak) are estimates, counts are of the "
			"sampled allocations\n", hd_model__sample_bytes(m));
	for (size_t i = 0; i < np; i++) {
		const struct rs_proc *p = procs[i];

		format_time(p->peak_time_ms, when, sizeof(when));
		fprintf(out, "pid %d (%s): peak %s bytes in %s allocations at %s (%" PRId64
			".%03d)\n", p->pid, p->comm[0] ? p->comm : "?", hd_textout__num(m, p->peak, n1),
			hd_textout__num(m, p->peak_count, n2), when, p->peak_time_ms / 1000,
			(int)(p->peak_time_ms % 1000));
		fprintf(out, "  %s allocations, %s bytes allocated, %s frees, %s temporary "
			"allocations\n", hd_textout__num(m, p->allocs, n1),
			hd_textout__num(m, p->allocated, n2), hd_textout__num(m, p->frees, n3),
			hd_textout__num(m, p->temporary, n4));
		fprintf(out, "  live at the end: %s bytes in %s allocations\n",
			hd_textout__num(m, p->bytes, n1), hd_textout__num(m, p->live, n2));
		if (p->shed)
			fprintf(out, "  estimated: the tracer fell behind and shed load: %s of "
				"these allocations were recorded as samples, each standing for "
				"more not recorded; bytes are estimates, counts are of the "
				"allocations recorded\n", hd_textout__num(m, p->shed, n1));
	}
	v = hd_model__run_stacks(m, &ns);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (sort != HD_SORT__ALL && order[i] != sort)
			continue;
		fputc('\n', out);
		write_top(m, v, ns, order[i], top, out);
	}
	free(v);
	return 0;
}

/*
 * The line after --report --sort KEY's headline when the first stack
 * of the list is not held by the biggest holder (the headline ranks
 * holders by live bytes, each summed over its stacks; the list ranks
 * stacks by KEY): whose it is, or that it is the C runtime's own, which
 * the headline leaves out. Nothing when there is no holder or no row.
 */
static int say_first(struct hd_model *m, struct holders *h, enum hd_sort sort,
		     bool runtime_apart, FILE *out)
{
	static const char *const keys[] = {
		[HD_SORT_PEAK] = "peak", [HD_SORT_ALLOCATIONS] = "allocations",
		[HD_SORT_TEMPORARY] = "temporary", [HD_SORT_ALLOCATED] = "allocated",
		[HD_SORT_LIVE] = "live",
	};
	size_t n, nh;
	const struct holder *big = holders__list(h, &nh);
	struct stack **v, *first[1];
	struct suppress_tally rt;
	uint64_t c;
	char *name;

	if (!nh || (int64_t)big[0].bytes <= 0)
		return 0;
	v = hd_model__run_stacks(m, &n);
	if (!v)
		return -ENOMEM;
	hd_top__sort(v, n, sort);
	first[0] = n && (int64_t)hd_top__value(v[0], sort, &c) > 0 ? v[0] : NULL;
	free(v);
	if (!first[0])
		return 0;
	name = hd_group__key(m, HD_BY_FUNCTION, first[0]);
	if (!name)
		return -ENOMEM;
	if (runtime_apart && !hd_runtime__split(m, first, 1, &rt))
		fprintf(out, "sorted by %s: the first stack below is the C runtime's own (%s's), "
			"left out of the headline (--no-default-suppressions counts it)\n",
			keys[sort], name);
	else if (strcmp(name, big[0].func))
		fprintf(out, "sorted by %s: the first stack below is %s's, not the biggest "
			"holder's\n", keys[sort], name);
	free(name);
	return 0;
}

int hd_stats__report(struct hd_model *m, enum hd_sort sort, unsigned int top, bool runtime_apart,
		     FILE *out)
{
	struct holders *h = hd_report__holders(m, runtime_apart, out);
	int err = h ? say_first(m, h, sort, runtime_apart, out) : -ENOMEM;

	holders__free(h);
	return err ? err : hd_stats__write(m, sort, top, out);
}

int hd_stats__growth(struct hd_model *m, unsigned int top, bool full, FILE *out)
{
	unsigned int ndumps = hd_model__dumps(m);
	struct hd_growth *g;
	struct stack **v;
	uint64_t *bytes, *count;
	struct holders *h = NULL;
	size_t k;
	int err;
	char why[160], b[32];

	if (ndumps < 2) {
		elog("--growth compares dumps, and the input holds %u: heapsnoop -i SECS "
		     "writes one every SECS seconds, kill -USR1 asks for one now (-A appends "
		     "runs to one log)", ndumps);
		return -EINVAL;
	}
	err = hd_growth__list(m, &g, &k);
	if (err == -ENOENT)
		fputs("no whole-run records (stack) in the input\n", out);
	if (err)
		return err;
	/* The answer first: the function whose stacks grew most (holders.h). */
	v = calloc(k ? k : 1, sizeof(*v));
	bytes = calloc(k ? k : 1, sizeof(*bytes));
	count = calloc(k ? k : 1, sizeof(*count));
	for (size_t i = 0; v && bytes && count && i < k; i++) {
		v[i] = (struct stack *)g[i].s;
		bytes[i] = (uint64_t)g[i].bytes;
		count[i] = (uint64_t)g[i].count;
	}
	if (v && bytes && count)
		h = hd_group__holders(m, v, k, bytes, count, true);
	free(v);
	free(bytes);
	free(count);
	if (!h) {
		free(g);
		return -ENOMEM;
	}
	hd_report__headline(m, h, "biggest growth", out);
	holders__free(h);
	if (hd_textout__why_estimated(m, why, sizeof(why)))
		fprintf(out, "estimated: %s; bytes are estimates, counts are of the sampled "
			"allocations\n", why);
	fprintf(out, "stacks whose live bytes grew over %u dumps (%u intervals), biggest first:\n",
		ndumps, ndumps ? ndumps - 1 : 0);
	for (size_t i = 0; i < k && i < top; i++) {
		fprintf(out, "  %s (%+" PRId64 " allocations), %+.1f bytes per dump, "
			"grew in %u of %u intervals, from pid %u:\n",
			text_size((uint64_t)g[i].bytes, true, b), g[i].count,
			g[i].intervals ? (double)g[i].bytes / g[i].intervals : 0.0, g[i].grew,
			g[i].intervals, g[i].s->pid);
		hd_textout__stack(m, "      ", g[i].s, full, out);
		if (*framefmt__cut(g[i].s->flags))
			fprintf(out, "      (%s)\n", framefmt__cut(g[i].s->flags));
	}
	if (!k)
		fputs("  none\n", out);
	free(g);
	return 0;
}

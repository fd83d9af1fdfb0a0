// SPDX-License-Identifier: MIT
/*
 * report.c - heapdecode --report (see report.h). The answer first: the
 * biggest holder (holders.h) heads it; then the stacks, each as
 * stackview.h shows one (cut below main, runs of frames without a
 * symbol folded, versions hidden; framefmt.h's frame, as eu-addr2line
 * -i shows it); an incomplete stack is marked after its header
 * (docs/OUTPUT.md, "What heapdecode writes").
 */
#include <inttypes.h>
#include <stdlib.h>

#include "analyses/group.h"
#include "analyses/runtime.h"
#include "formats/report.h"
#include "formats/textout.h"
#include "framefmt.h"
#include "holders.h"

/* @v's share of the total bytes, in percent (of the total change). */
static double share(uint64_t total, uint64_t v)
{
	return total ? 100.0 * (double)(int64_t)v / (double)(int64_t)total : 0;
}

void hd_report__headline(struct hd_model *m, struct holders *h, const char *what, FILE *out)
{
	char line[1024];

	if (h && holders__headline(h, what, line, sizeof(line)))
		fprintf(out, "%s\n", line);
	else if (h && hd_model__is_diff(m))
		fprintf(out, "%s: none, nothing grew\n", what);
	else if (h)
		fprintf(out, "%s: none, nothing is live\n", what);
}

struct holders *hd_report__holders(struct hd_model *m, bool runtime_apart, FILE *out)
{
	size_t n;
	struct stack **v = hd_model__live_stacks(m, &n);
	struct suppress_tally rt;
	struct holders *h;

	if (v && runtime_apart)
		n = hd_runtime__split(m, v, n, &rt);
	h = v ? hd_group__holders(m, v, n, NULL, NULL, hd_model__is_diff(m)) : NULL;

	hd_report__headline(m, h, hd_model__is_diff(m) ? "biggest growth" : "biggest holder",
			    out);
	free(v);
	return h;
}

/* "N more ROWs, SIZE: --top shows them", for the @left rows not shown. */
static void more(struct hd_model *m, size_t left, uint64_t bytes, const char *what, FILE *out)
{
	char b[32];

	if (left)
		fprintf(out, "... %zu more %s%s, %s (--top N shows more)\n", left, what,
			left == 1 ? "" : "s", hd_textout__size(m, bytes, b));
}

/* --by function: each holder, then beneath it its callers and their shares. */
static void report_by_holder(struct hd_model *m, struct holders *h, unsigned int top,
			     FILE *out)
{
	size_t k;
	const struct holder *v = holders__list(h, &k);
	uint64_t bytes, count, rest = 0;
	char b1[64], b2[32], est[64];

	hd_model__totals(m, &bytes, &count);
	hd_textout__estimated(m, out);
	for (size_t i = 0; i < k; i++) {
		if (i >= top) {
			rest += v[i].bytes;
			continue;
		}
		fprintf(out, "%s (%.1f%%) in %s allocations: %s", hd_textout__size(m, v[i].bytes, b1),
			share(bytes, v[i].bytes), hd_textout__num(m, v[i].count, b2), v[i].func);
		if (v[i].cut)
			fprintf(out, " (%" PRIu64 " with an incomplete stack)", v[i].cut);
		fputc('\n', out);
		for (size_t j = 0; j < v[i].ncallers; j++)
			fprintf(out, "    %s (%.1f%%) in %s allocations from %s\n",
				hd_textout__size(m, v[i].callers[j].bytes, b1),
				share(v[i].bytes, v[i].callers[j].bytes),
				hd_textout__num(m, v[i].callers[j].count, b2), v[i].callers[j].name);
	}
	more(m, k > top ? k - top : 0, rest, "function", out);
	fprintf(out, "total%s: %s in %s allocations from %zu function%s\n",
		hd_textout__est_mark(m, est), hd_textout__size_exact(m, bytes, b1),
		hd_textout__num(m, count, b2), k, k == 1 ? "" : "s");
}

static void report_by_key(struct hd_model *m, enum hd_by by, unsigned int top, FILE *out)
{
	static const char *const what[] = { "stack", "process", "function", "module" };
	size_t k;
	struct hd_row *rows = hd_group__by(m, by, &k);
	uint64_t bytes, count, rest = 0;
	char b1[64], b2[32], est[64];

	if (!rows)
		return;
	hd_model__totals(m, &bytes, &count);
	hd_textout__estimated(m, out);
	for (size_t i = 0; i < k; i++) {
		if (i >= top) {
			rest += rows[i].bytes;
			continue;
		}
		fprintf(out, "%s (%.1f%%) in %s allocations: %s",
			hd_textout__size(m, rows[i].bytes, b1), share(bytes, rows[i].bytes),
			hd_textout__num(m, rows[i].count, b2), rows[i].key);
		if (rows[i].cut)
			fprintf(out, " (%" PRIu64 " with an incomplete stack)", rows[i].cut);
		fputc('\n', out);
	}
	more(m, k > top ? k - top : 0, rest, what[by], out);
	fprintf(out, "total%s: %s in %s allocations from %zu %s%s\n",
		hd_textout__est_mark(m, est), hd_textout__size_exact(m, bytes, b1),
		hd_textout__num(m, count, b2), k, what[by], k == 1 ? "" : "s");
	hd_group__free(rows, k);
}

static void report_by_stack(struct hd_model *m, unsigned int top, bool full, bool runtime_apart,
			    FILE *out)
{
	size_t n;
	struct stack **v = hd_model__live_stacks(m, &n);
	struct suppress_tally rt = { 0 };
	uint64_t bytes, count, rest = 0;
	char b1[64], b2[32], est[64];

	if (!v)
		return;
	hd_model__totals(m, &bytes, &count);
	/* The C runtime's own said after the program's, its total apart. */
	if (runtime_apart) {
		n = hd_runtime__split(m, v, n, &rt);
		bytes -= rt.bytes;
		count -= rt.count;
	}
	hd_textout__estimated(m, out);
	for (size_t i = 0; i < n; i++) {
		const struct stack *s = v[i];

		if (i >= top) {
			rest += s->live_bytes;
			continue;
		}
		fprintf(out, "%s (%.1f%%) in %s allocations", hd_textout__size(m, s->live_bytes, b1),
			share(bytes, s->live_bytes), hd_textout__num(m, s->live_count, b2));
		if (s->pid)
			fprintf(out, " from pid %u", s->pid);
		if (*framefmt__cut(s->flags))
			fprintf(out, " (%s)", framefmt__cut(s->flags));
		fputs(":\n", out);
		hd_textout__stack(m, "    ", s, full, out);
	}
	more(m, n > top ? n - top : 0, rest, "stack", out);
	fprintf(out, "total%s: %s in %s allocations from %zu stacks\n",
		hd_textout__est_mark(m, est), hd_textout__size_exact(m, bytes, b1),
		hd_textout__num(m, count, b2), n);
	hd_runtime__write(&rt, out);
	free(v);
}

void hd_report__write(struct hd_model *m, const struct hd_write_opts *o, FILE *out)
{
	/* Every row unless --top was given. */
	unsigned int top = o->top_set ? o->top : (unsigned int)-1;
	struct holders *h = hd_report__holders(m, o->runtime_apart, out);

	if (o->by == HD_BY_FUNCTION && h)
		report_by_holder(m, h, top, out);
	else if (o->by == HD_BY_STACK)
		report_by_stack(m, top, o->full_stacks, o->runtime_apart, out);
	else if (o->by != HD_BY_FUNCTION)
		report_by_key(m, o->by, top, out);
	holders__free(h);
}

// SPDX-License-Identifier: MIT
/*
 * report.c - heapdecode --report (see report.h). A frame reads as
 * eu-addr2line -i shows it; an incomplete stack is marked after its
 * header (docs/OUTPUT.md, "What heapdecode writes").
 */
#include <inttypes.h>
#include <stdlib.h>

#include "analyses/group.h"
#include "analyses/runtime.h"
#include "formats/report.h"
#include "formats/textout.h"
#include "framefmt.h"

/* @v's share of the total bytes, in percent (of the total change). */
static double share(uint64_t total, uint64_t v)
{
	return total ? 100.0 * (double)(int64_t)v / (double)(int64_t)total : 0;
}

static void report_by_key(struct hd_model *m, enum hd_by by, FILE *out)
{
	static const char *const what[] = { "stack", "process", "function", "module" };
	size_t k;
	struct hd_row *rows = hd_group__by(m, by, &k);
	uint64_t bytes, count;
	char b1[32], b2[32], est[64];

	if (!rows)
		return;
	hd_model__totals(m, &bytes, &count);
	hd_textout__estimated(m, out);
	for (size_t i = 0; i < k; i++) {
		fprintf(out, "%s bytes (%.1f%%) in %s allocations: %s",
			hd_textout__num(m, rows[i].bytes, b1), share(bytes, rows[i].bytes),
			hd_textout__num(m, rows[i].count, b2), rows[i].key);
		if (rows[i].cut)
			fprintf(out, " (%" PRIu64 " with an incomplete stack)", rows[i].cut);
		fputc('\n', out);
	}
	fprintf(out, "total%s: %s bytes in %s allocations from %zu %s%s\n",
		hd_textout__est_mark(m, est), hd_textout__num(m, bytes, b1),
		hd_textout__num(m, count, b2), k, what[by], k == 1 ? "" : "s");
	hd_group__free(rows, k);
}

static void report_by_stack(struct hd_model *m, bool runtime_apart, FILE *out)
{
	size_t n;
	struct stack **v = hd_model__live_stacks(m, &n);
	struct suppress_tally rt = { 0 };
	uint64_t bytes, count;
	char b1[32], b2[32], est[64];

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

		fprintf(out, "%s bytes (%.1f%%) in %s allocations", hd_textout__num(m, s->live_bytes, b1),
			share(bytes, s->live_bytes), hd_textout__num(m, s->live_count, b2));
		if (s->pid)
			fprintf(out, " from pid %u", s->pid);
		if (*framefmt__cut(s->flags))
			fprintf(out, " (%s)", framefmt__cut(s->flags));
		fputs(":\n", out);
		for (uint32_t k = 0; k < s->depth; k++)
			hd_textout__frame(m, "    ", s->pid, k, s->frames[k], out);
	}
	fprintf(out, "total%s: %s bytes in %s allocations from %zu stacks\n",
		hd_textout__est_mark(m, est), hd_textout__num(m, bytes, b1),
		hd_textout__num(m, count, b2), n);
	hd_runtime__write(&rt, out);
	free(v);
}

void hd_report__write(struct hd_model *m, enum hd_by by, bool runtime_apart, FILE *out)
{
	if (by == HD_BY_STACK)
		report_by_stack(m, runtime_apart, out);
	else
		report_by_key(m, by, out);
}

// SPDX-License-Identifier: MIT
/*
 * folded.c - heapdecode --folded and --flamegraph (see folded.h): the
 * rows of fold.h written as folded lines, or handed to the flame graph.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analyses/fold.h"
#include "analyses/top.h"
#include "formats/flamegraph.h"
#include "formats/folded.h"
#include "formats/textout.h"
#include "msg.h"

static void write_rows(const struct hd_row *rows, size_t n, bool counts, FILE *out)
{
	for (size_t i = 0; rows && i < n; i++)
		fprintf(out, "%s %" PRId64 "\n", rows[i].key,
			(int64_t)(counts ? rows[i].count : rows[i].bytes));
}

void hd_folded__write(struct hd_model *m, bool counts, FILE *out)
{
	size_t n;
	struct hd_row *rows = hd_fold__live(m, false, &n);
	char why[160];

	/* Folded lines have no room for it: standard error says so. */
	if (hd_textout__why_estimated(m, why, sizeof(why)))
		elog("the values are estimates: %s", why);
	/* Stacks that differ only in addresses fold to the same names: merged. */
	write_rows(rows, n, counts, out);
	hd_group__free(rows, n);
}

int hd_folded__sorted(struct hd_model *m, enum hd_sort sort, FILE *out)
{
	size_t ns, k = 0;
	struct stack **v = hd_model__run_stacks(m, &ns);
	uint64_t *values = v ? calloc(ns ? ns : 1, sizeof(*values)) : NULL, c;
	struct hd_row *rows = NULL;

	for (size_t i = 0; values && i < ns; i++)
		values[i] = hd_top__value(v[i], sort, &c);
	if (values)
		rows = hd_fold__values(m, v, values, ns, &k);
	write_rows(rows, k, false, out);
	hd_group__free(rows, k);
	free(values);
	free(v);
	return rows ? 0 : -ENOMEM;
}

int hd_folded__flamegraph(struct hd_model *m, bool counts, const char *title, int width,
			  FILE *out)
{
	size_t n;
	struct hd_row *rows = hd_fold__live(m, true, &n);
	struct folded_line *lines = rows ? calloc(n ? n : 1, sizeof(*lines)) : NULL;
	const char *unit = counts ? "allocations" : "bytes";
	char sampled[600], est_unit[32], why[160];
	int err = -ENOMEM;

	if (hd_textout__why_estimated(m, why, sizeof(why))) {
		snprintf(sampled, sizeof(sampled), "%s (estimated: %s)", title, why);
		snprintf(est_unit, sizeof(est_unit), "estimated %s", unit);
		title = sampled;
		unit = est_unit;
	}
	if (lines) {
		for (size_t i = 0; i < n; i++) {
			int64_t v = (int64_t)(counts ? rows[i].count : rows[i].bytes);

			lines[i] = (struct folded_line){ rows[i].key, (uint64_t)(v < 0 ? -v : v),
							 hd_model__is_diff(m) ? v : 0 };
		}
		err = flamegraph__write(out, lines, n, title, unit, width);
	}
	free(lines);
	hd_group__free(rows, n);
	return err;
}

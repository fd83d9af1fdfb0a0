// SPDX-License-Identifier: MIT
/*
 * growth.c - the stacks that grew over a log's dumps (see growth.h). A
 * stack's `stack` records are written only when it changed, so its
 * value at a dump is its last record up to it; before its first record
 * it held nothing.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyses/growth.h"

static int by_growth(const void *a, const void *b)
{
	const struct hd_growth *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* Stack @id's growth over dumps 1..@ndumps from its history. */
static struct hd_growth growth_of(struct hd_model *m, size_t id, const struct stack *s,
				  unsigned int ndumps)
{
	struct hd_growth g = { .s = s, .intervals = ndumps ? ndumps - 1 : 0 };
	size_t n;
	const struct rs_point *h = hd_model__history(m, id, &n);
	uint64_t first_b = 0, first_c = 0, prev = 0, last_b = 0, last_c = 0;

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

int hd_growth__list(struct hd_model *m, struct hd_growth **out, size_t *n)
{
	unsigned int ndumps = hd_model__dumps(m);
	size_t ns, k = 0;
	struct stack **v = hd_model__run_stacks(m, &ns);
	struct hd_growth *g = v ? calloc(ns ? ns : 1, sizeof(*g)) : NULL;

	*out = NULL;
	*n = 0;
	if (!g || !ns) {
		free(v);
		free(g);
		return g ? -ENOENT : -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		g[k] = growth_of(m, i, v[i], ndumps);
		if (g[k].bytes > 0)
			k++;
	}
	qsort(g, k, sizeof(*g), by_growth);
	free(v);
	*out = g;
	*n = k;
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * group.c - the live set in rows (see group.h): each stack's key made,
 * rows of equal keys summed, then sorted by bytes (the folded stacks'
 * rows too: analyses/fold.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/group.h"
#include "framefmt.h"
#include "holders.h"

static int row_by_key(const void *a, const void *b)
{
	return strcmp(((const struct hd_row *)a)->key, ((const struct hd_row *)b)->key);
}

/* Biggest first; signed, for the differences of --base. */
static int row_by_bytes(const void *a, const void *b)
{
	const struct hd_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return (int64_t)x->bytes < (int64_t)y->bytes ? 1 : -1;
	if (x->count != y->count)
		return (int64_t)x->count < (int64_t)y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

size_t hd_group__merge(struct hd_row *rows, size_t m)
{
	size_t k = 0;

	qsort(rows, m, sizeof(*rows), row_by_key);
	for (size_t i = 0; i < m; i++) {
		if (k && !strcmp(rows[k - 1].key, rows[i].key)) {
			rows[k - 1].bytes += rows[i].bytes;
			rows[k - 1].count += rows[i].count;
			rows[k - 1].cut += rows[i].cut;
			free(rows[i].key);
			continue;
		}
		rows[k++] = rows[i];
	}
	/* With --base, what did not change at all is not shown. */
	for (size_t i = m = 0; i < k; i++) {
		if (rows[i].bytes || rows[i].count)
			rows[m++] = rows[i];
		else
			free(rows[i].key);
	}
	k = m;
	qsort(rows, k, sizeof(*rows), row_by_bytes);
	return k;
}

/*
 * One row per live stack, keyed by @key_fn (NULL: no memory, the stack
 * left out); merged. A calloc'ed array of *@n rows, or NULL.
 */
static struct hd_row *grouped_rows(struct hd_model *m, enum hd_by by,
				   char *(*key_fn)(struct hd_model *m, enum hd_by by,
						   const struct stack *s),
				   size_t *n)
{
	size_t ns, k = 0;
	struct stack **v = hd_model__live_stacks(m, &ns);
	struct hd_row *rows = v ? calloc(ns ? ns : 1, sizeof(*rows)) : NULL;

	*n = 0;
	if (rows) {
		for (size_t i = 0; i < ns; i++) {
			rows[k] = (struct hd_row){ key_fn(m, by, v[i]), v[i]->live_bytes,
						   v[i]->live_count,
						   *framefmt__cut(v[i]->flags) ? v[i]->live_count : 0 };
			if (rows[k].key)
				k++;
		}
		*n = hd_group__merge(rows, k);
	}
	free(v);
	return rows;
}

void hd_group__free(struct hd_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].key);
	free(rows);
}

/* The model's naming of a frame, for holders.h. */
static bool lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	hd_model__lookup(ctx, pid, addr, f);
	return true;
}

/*
 * The --by key of stack @s: its pid, frame 0's module, or its holder
 * (holders.h: the innermost function of the program's own, an inlined
 * one included, the allocator and the C runtime skipped).
 */
static char *key_of(struct hd_model *m, enum hd_by by, const struct stack *s)
{
	struct sym_frame f;
	char *k = NULL, name[512];

	if (by == HD_BY_PID) {
		if (asprintf(&k, "pid %u", s->pid) < 0)
			return NULL;
		return k;
	}
	if (!s->depth)
		return strdup("[no stack]");
	hd_model__lookup(m, s->pid, s->frames[0], &f);
	if (by == HD_BY_MODULE)
		return strdup(f.module ? f.module : "[unmapped]");
	holders__name(lookup, m, s->pid, s->frames, s->depth, name, sizeof(name));
	return strdup(name);
}

char *hd_group__key(struct hd_model *m, enum hd_by by, const struct stack *s)
{
	return key_of(m, by, s);
}

struct hd_row *hd_group__by(struct hd_model *m, enum hd_by by, size_t *n)
{
	return grouped_rows(m, by, key_of, n);
}

struct holders *hd_group__holders(struct hd_model *m, struct stack *const *v, size_t n,
				  const uint64_t *bytes, const uint64_t *count, bool diff)
{
	struct holders *h = holders__new(lookup, m, diff);

	for (size_t i = 0; h && i < n; i++) {
		uint64_t b = bytes ? bytes[i] : v[i]->live_bytes;
		uint64_t c = count ? count[i] : v[i]->live_count;

		if ((b || c) && holders__add(h, v[i]->pid, v[i]->frames, v[i]->depth, b, c,
					     *framefmt__cut(v[i]->flags) ? c : 0)) {
			holders__free(h);
			return NULL;
		}
	}
	return h;
}

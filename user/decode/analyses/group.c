// SPDX-License-Identifier: MIT
/*
 * group.c - the live set in rows (see group.h): each stack's key made,
 * rows of equal keys summed, then sorted by bytes. A stack folds as
 * flamegraph.pl's stackcollapse tools fold one: root first, frames
 * joined by ';', so neither ';' nor ' ' (before the value) is in a name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/group.h"
#include "framefmt.h"
#include "holders.h"

/* A frame's name for folded stacks, its separators made '_'. */
static void fold_name(const struct sym_frame *f, uint64_t addr, char *buf, size_t cap)
{
	hd_model__frame_name(f, addr, buf, cap);
	for (char *c = buf; *c; c++)
		if (*c == ';' || *c == ' ')
			*c = '_';
}

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

/*
 * Rows with equal keys summed into one (the others' keys freed), then
 * sorted by bytes, biggest first. Returns the number of rows left.
 */
static size_t merge_rows(struct hd_row *rows, size_t m)
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
		*n = merge_rows(rows, k);
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

/* One stack's folded text (root first), in a malloc'ed string. */
static char *fold_stack(struct hd_model *m, enum hd_by by, const struct stack *s)
{
	char *text = NULL, name[512];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)by;
	if (!f)
		return NULL;
	/* An incomplete stack's root is the mark: it does not reach main. */
	if (*framefmt__cut(s->flags)) {
		snprintf(name, sizeof(name), "[%s]", framefmt__cut(s->flags));
		for (char *c = name; *c; c++)
			if (*c == ' ')
				*c = '_';
		fprintf(f, "%s%s", name, s->depth ? ";" : "");
	}
	if (s->depth == 0)
		fputs("[no stack]", f);
	for (uint32_t k = s->depth; k-- > 0;) {
		struct sym_frame sf;

		hd_model__lookup(m, s->pid, s->frames[k], &sf);
		fold_name(&sf, s->frames[k], name, sizeof(name));
		fprintf(f, "%s%s", name, k ? ";" : "");
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
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

struct hd_row *hd_group__by(struct hd_model *m, enum hd_by by, size_t *n)
{
	return grouped_rows(m, by, key_of, n);
}

struct hd_row *hd_group__folded(struct hd_model *m, size_t *n)
{
	return grouped_rows(m, HD_BY_STACK, fold_stack, n);
}

struct hd_row *hd_group__values(struct hd_model *m, struct stack *const *v,
				const uint64_t *values, size_t n, size_t *nrows)
{
	struct hd_row *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t k = 0;

	*nrows = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		rows[k] = (struct hd_row){ values[i] ? fold_stack(m, HD_BY_STACK, v[i]) : NULL,
					   values[i], 0 };
		if (rows[k].key)
			k++;
	}
	*nrows = merge_rows(rows, k);
	return rows;
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

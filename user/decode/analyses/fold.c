// SPDX-License-Identifier: MIT
/*
 * fold.c - stacks folded (see fold.h): each frame symbolized, its
 * inlined functions put after it (the symbolizer gives them innermost
 * first), rows of equal text summed, then sorted by bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/fold.h"
#include "framefmt.h"

/* @name to @f as a folded frame: its separators made '_', then @mark. */
static void put_name(FILE *f, const char *name, const char *mark)
{
	for (const char *c = name; *c; c++)
		fputc(*c == ';' || *c == ' ' ? '_' : *c, f);
	fputs(mark, f);
}

/* Frame @addr of @pid, and what was inlined there, outermost first. */
static void put_frame(struct hd_model *m, uint32_t pid, uint64_t addr, FILE *f)
{
	struct sym_frame sf;
	char name[512];

	hd_model__lookup(m, pid, addr, &sf);
	hd_model__frame_name(&sf, addr, name, sizeof(name));
	put_name(f, name, "");
	for (int i = sf.status == SYM_OK && !sf.kind ? sf.ninline : 0; i-- > 0;) {
		fputc(';', f);
		put_name(f, sf.inl[i].func ? sf.inl[i].func : "??", HD_FOLD_INLINED);
	}
}

char *hd_fold__stack(struct hd_model *m, const struct stack *s)
{
	const char *cut = framefmt__cut(s->flags);
	char *text = NULL, mark[128];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	/* An incomplete stack's root is the mark: it does not reach main. */
	if (*cut) {
		snprintf(mark, sizeof(mark), "[%s]", cut);
		put_name(f, mark, s->depth ? ";" : "");
	}
	if (s->depth == 0)
		fputs("[no stack]", f);
	for (uint32_t k = s->depth; k-- > 0;) {
		put_frame(m, s->pid, s->frames[k], f);
		if (k)
			fputc(';', f);
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static int row_by_key(const void *a, const void *b)
{
	return strcmp(((const struct hd_row *)a)->key, ((const struct hd_row *)b)->key);
}

/* Most bytes first; signed, for the differences of --base. */
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
 * Rows of equal keys summed into one (the others' keys freed), those
 * left at 0 and 0 dropped, the rest sorted by bytes. Returns how many.
 */
static size_t merge_rows(struct hd_row *rows, size_t n)
{
	size_t k = 0, kept = 0;

	qsort(rows, n, sizeof(*rows), row_by_key);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(rows[k - 1].key, rows[i].key)) {
			rows[k - 1].bytes += rows[i].bytes;
			rows[k - 1].count += rows[i].count;
			rows[k - 1].cut += rows[i].cut;
			free(rows[i].key);
			continue;
		}
		rows[k++] = rows[i];
	}
	for (size_t i = 0; i < k; i++) {
		if (rows[i].bytes || rows[i].count)
			rows[kept++] = rows[i];
		else
			free(rows[i].key);
	}
	qsort(rows, kept, sizeof(*rows), row_by_bytes);
	return kept;
}

/*
 * @n stacks @v folded into rows: @values[i] their bytes (NULL: their
 * live bytes and count), 0 left out. NULL: no memory.
 */
static struct hd_row *fold_rows(struct hd_model *m, struct stack *const *v,
				const uint64_t *values, size_t n, size_t *nrows)
{
	struct hd_row *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t k = 0;

	*nrows = 0;
	for (size_t i = 0; rows && i < n; i++) {
		const struct stack *s = v[i];

		if (values && !values[i])
			continue;
		rows[k] = (struct hd_row){
			.key = hd_fold__stack(m, s),
			.bytes = values ? values[i] : s->live_bytes,
			.count = values ? 0 : s->live_count,
			.cut = !values && *framefmt__cut(s->flags) ? s->live_count : 0,
		};
		if (!rows[k].key) {
			hd_group__free(rows, k);
			return NULL;
		}
		k++;
	}
	if (rows)
		*nrows = merge_rows(rows, k);
	return rows;
}

struct hd_row *hd_fold__live(struct hd_model *m, size_t *n)
{
	size_t ns;
	struct stack **v = hd_model__live_stacks(m, &ns);
	struct hd_row *rows = v ? fold_rows(m, v, NULL, ns, n) : NULL;

	if (!rows)
		*n = 0;
	free(v);
	return rows;
}

struct hd_row *hd_fold__values(struct hd_model *m, struct stack *const *v,
			       const uint64_t *values, size_t n, size_t *nrows)
{
	return fold_rows(m, v, values, n, nrows);
}

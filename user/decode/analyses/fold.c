// SPDX-License-Identifier: MIT
/*
 * fold.c - stacks folded (see fold.h): each frame symbolized, its
 * inlined functions put after it (the symbolizer gives them innermost
 * first), rows of equal text summed, then sorted by bytes.
 */
#include <errno.h>
#include <stdbool.h>
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

/*
 * Frame @addr of @pid, and what was inlined there, outermost first; with
 * @kinds an interpreter's or JIT code's frame marked `_[KIND]`.
 */
static void put_frame(struct hd_model *m, uint32_t pid, uint64_t addr, bool kinds, FILE *f)
{
	struct sym_frame sf;
	char name[512], mark[REC_KIND_MAX + 4] = "";

	hd_model__lookup(m, pid, addr, &sf);
	hd_model__frame_name(&sf, addr, name, sizeof(name));
	if (kinds && sf.status == SYM_OK && sf.kind)
		snprintf(mark, sizeof(mark), "_[%s]", sf.kind);
	put_name(f, name, mark);
	for (int i = sf.status == SYM_OK && !sf.kind ? sf.ninline : 0; i-- > 0;) {
		fputc(';', f);
		put_name(f, sf.inl[i].func ? sf.inl[i].func : "??", HD_FOLD_INLINED);
	}
}

static char *fold_stack(struct hd_model *m, const struct stack *s, bool kinds)
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
		put_frame(m, s->pid, s->frames[k], kinds, f);
		if (k)
			fputc(';', f);
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

char *hd_fold__stack(struct hd_model *m, const struct stack *s)
{
	return fold_stack(m, s, false);
}

/*
 * @n stacks @v folded into rows: @values[i] their bytes (NULL: their
 * live bytes and count), 0 left out. NULL: no memory.
 */
static struct hd_row *fold_rows(struct hd_model *m, struct stack *const *v,
				const uint64_t *values, size_t n, bool kinds, size_t *nrows)
{
	struct hd_row *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t k = 0;

	*nrows = 0;
	for (size_t i = 0; rows && i < n; i++) {
		const struct stack *s = v[i];

		if (values && !values[i])
			continue;
		rows[k] = (struct hd_row){
			.key = fold_stack(m, s, kinds),
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
		*nrows = hd_group__merge(rows, k);
	return rows;
}

struct hd_row *hd_fold__live(struct hd_model *m, bool kinds, size_t *n)
{
	size_t ns;
	struct stack **v = hd_model__live_stacks(m, &ns);
	struct hd_row *rows = v ? fold_rows(m, v, NULL, ns, kinds, n) : NULL;

	if (!rows)
		*n = 0;
	free(v);
	return rows;
}

struct hd_row *hd_fold__values(struct hd_model *m, struct stack *const *v,
			       const uint64_t *values, size_t n, size_t *nrows)
{
	return fold_rows(m, v, values, n, false, nrows);
}

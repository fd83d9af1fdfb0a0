// SPDX-License-Identifier: MIT
/*
 * frameview.c - the live set with one kind of frame (see frameview.h):
 * each stack's frames filtered, then interned in a table of their own,
 * where equal ones meet.
 */
#include <stdlib.h>
#include <string.h>

#include "model/frameview.h"
#include "model/model.h"

bool frameview__valid(const char *kind)
{
	size_t len = strlen(kind);

	if (!strcmp(kind, FRAMEVIEW_ANY))
		return true;
	return len && len <= REC_KIND_MAX && kind[0] >= 'a' && kind[0] <= 'z' &&
	       strspn(kind, "abcdefghijklmnopqrstuvwxyz0123456789_") == len && strcmp(kind, "jit");
}

/* Is frame @addr of @pid one of @kind's? */
static bool kept(struct hd_model *m, uint32_t pid, uint64_t addr, const char *kind)
{
	struct sym_frame f = { 0 };

	hd_model__lookup(m, pid, addr, &f);
	if (!f.kind || !strcmp(f.kind, "jit"))
		return false;
	return !strcmp(kind, FRAMEVIEW_ANY) || !strcmp(kind, f.kind);
}

/* @s's frames of @kind into @out, innermost first; their number. */
static uint32_t view_of(struct hd_model *m, const struct stack *s, const char *kind,
			uint64_t *out)
{
	uint32_t depth = 0;

	for (uint32_t k = 0; k < s->depth; k++) {
		if (kept(m, s->pid, s->frames[k], kind))
			out[depth++] = s->frames[k];
		else if (depth == 0)
			out[depth++] = FRAMEVIEW_NATIVE;	/* the leaf's, once */
	}
	return depth;
}

struct stacks *frameview__new(struct hd_model *m, const char *kind, struct stack *const *v,
			      size_t n)
{
	struct stacks *st = stacks__new();
	uint64_t *buf = malloc(REC_MAX_DEPTH * sizeof(*buf));

	for (size_t i = 0; st && buf && i < n; i++) {
		const struct stack *s = v[i];
		uint32_t depth = view_of(m, s, kind, buf);
		int id = stacks__intern(st, s->pid, buf, depth, s->flags);
		struct stack *t;

		if (id < 0)
			goto fail;
		t = stacks__get(st, (uint32_t)id);
		t->live_count += s->live_count;
		t->live_bytes += s->live_bytes;
		t->allocs += s->allocs;
		t->alloc_bytes += s->alloc_bytes;
		t->frees += s->frees;
		t->temporary += s->temporary;
		t->peak_count += s->peak_count;
		t->peak_bytes += s->peak_bytes;
	}
	if (buf) {
		free(buf);
		return st;
	}
fail:
	free(buf);
	stacks__free(st);
	return NULL;
}

// SPDX-License-Identifier: MIT
/*
 * stackview.c - a stack for people (see stackview.h). The frame itself
 * is framefmt.c's; here only what is left out, folded or shortened.
 */
#include <string.h>

#include "framefmt.h"
#include "stackview.h"
#include "text.h"

/* Room for the unversioned names of one frame: its function and its inlines. */
struct names {
	char v[SYM_MAX_INLINE + 1][256];
};

/* @name without its symbol version: itself, or a copy in @buf (256 bytes). */
static const char *unversioned(const char *name, char *buf)
{
	size_t len;

	if (!name)
		return NULL;
	len = symbol_unversioned_len(name);
	if (name[len] == '\0' || len >= 256)
		return name;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return buf;
}

/* @f with its names' versions hidden, the copies in @nm. */
static void hide_versions(struct sym_frame *f, struct names *nm)
{
	if (f->status != SYM_OK || f->kind)
		return;
	f->func = unversioned(f->func, nm->v[SYM_MAX_INLINE]);
	for (int i = 0; i < f->ninline && i < SYM_MAX_INLINE; i++)
		f->inl[i].func = unversioned(f->inl[i].func, nm->v[i]);
}

/* A frame with no symbol (in a module): one of a run to fold. */
static bool unnamed(const struct sym_frame *f, bool named)
{
	return named && f->status == SYM_NO_SYMBOL && f->module && !f->kind;
}

/* Is @f main, below which a stack is the runtime's start? */
static bool is_main(const struct sym_frame *f)
{
	return f->status == SYM_OK && f->func && !f->kind &&
	       symbol_unversioned_len(f->func) == 4 && !strncmp(f->func, "main", 4);
}

void stackview__write(FILE *out, const char *indent, uint32_t pid, const uint64_t *frames,
		      uint32_t depth, bool full, holders_lookup_fn fn, void *ctx)
{
	static struct names nm;

	for (uint32_t k = 0; k < depth; k++) {
		struct sym_frame f, g;
		bool named = fn(ctx, pid, frames[k], &f);
		uint32_t run = 1;

		if (!full && named && holders__is_start(&f))
			return;
		if (!full && unnamed(&f, named)) {
			/* The frames after it without a symbol in the same module. */
			while (k + run < depth && fn(ctx, pid, frames[k + run], &g) &&
			       unnamed(&g, true) && !strcmp(g.module, f.module))
				run++;
			if (run > 1) {
				fprintf(out, "%s#%-2u [%u frames without a symbol in %s]\n", indent,
					k, run, path_base(f.module));
				k += run - 1;
				continue;
			}
		}
		if (named)
			hide_versions(&f, &nm);
		framefmt__write(out, indent, k, frames[k], named ? &f : NULL);
		if (!full && named && is_main(&f))
			return;
	}
}

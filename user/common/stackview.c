// SPDX-License-Identifier: MIT
/*
 * stackview.c - a stack for people (see stackview.h). The frame itself
 * is framefmt.c's, its names as the symbolizer gives them (versions
 * hidden there unless asked); here only what is left out or folded.
 */
#include <string.h>

#include "framefmt.h"
#include "stackview.h"
#include "text.h"

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

/*
 * Frames [@k, ...) of the runtime's thread start, then the boundary to
 * the thread's creator: its index; 0 when a stack ends there (no creator).
 */
static uint32_t creator_boundary(uint32_t pid, const uint64_t *frames, uint32_t depth, uint32_t k,
				 holders_lookup_fn fn, void *ctx)
{
	struct sym_frame g;

	for (; k < depth && fn(ctx, pid, frames[k], &g); k++) {
		if (holders__is_boundary(&g))
			return k;
		if (!holders__is_start(&g))
			return 0;
	}
	return 0;
}

void stackview__write(FILE *out, const char *indent, uint32_t pid, const uint64_t *frames,
		      uint32_t depth, bool full, holders_lookup_fn fn, void *ctx)
{
	/* Just past a boundary: the clone wrappers there are the creator's frames. */
	bool creation = false;

	for (uint32_t k = 0; k < depth; k++) {
		struct sym_frame f, g;
		bool named = fn(ctx, pid, frames[k], &f);
		uint32_t run = 1, b;

		if (named && holders__is_boundary(&f))
			creation = true;
		else if (named && !holders__is_start(&f))
			creation = false;
		/* A thread's start: its creator's frames follow, past the boundary. */
		if (!full && named && !creation && holders__is_start(&f)) {
			b = creator_boundary(pid, frames, depth, k, fn, ctx);
			if (!b)
				return;
			k = b - 1;
			continue;
		}
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
		framefmt__write(out, indent, k, frames[k], named ? &f : NULL);
		if (!full && named && is_main(&f))
			return;
	}
}

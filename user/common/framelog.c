// SPDX-License-Identifier: MIT
/*
 * framelog.c - the frames that are not native code in a log (see
 * frametab.h): the frame and jit records a dump's stacks need, written
 * once each per dump, and taken back by a reader (heapdecode, or the
 * tracer's own summary) into the tables frametab.c keeps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"
#include "frametab_int.h"

/* --- dumps -------------------------------------------------------------------------- */

void frametab__dump_begin(struct frametab *ft)
{
	ft->gen++;
}

/* Room in @p's list of needed frames for one more. */
static int need_room(struct fproc *p)
{
	size_t cap;
	struct fframe **v;

	if (p->nneed < p->capneed)
		return 0;
	cap = p->capneed ? p->capneed * 2 : 64;
	v = realloc(p->need, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->need = v;
	p->capneed = cap;
	return 0;
}

bool frametab__has(struct frametab *ft, uint32_t pid)
{
	return ft_proc_of(ft, pid, false) != NULL;
}

int frametab__need(struct frametab *ft, uint32_t pid, const uint64_t *frames, uint32_t depth)
{
	struct fproc *p = ft_proc_of(ft, pid, false);

	for (uint32_t i = 0; p && i < depth; i++) {
		if (rec_is_frame_addr(frames[i])) {
			struct fframe *f = ft_frame_at(p, frames[i]);

			if (!f || !f->kind || f->gen == ft->gen)
				continue;
			if (p->need_gen != ft->gen) {
				p->need_gen = ft->gen;
				p->nneed = 0;
			}
			if (need_room(p))
				return -ENOMEM;
			f->gen = ft->gen;
			p->need[p->nneed++] = f;
		} else if (p->jit.n) {
			/* A return address: its call is the byte before. */
			struct jrange *r = frames[i] ? ft_range_at(ft, p, frames[i] - 1) : NULL;

			if (r)
				r->gen = ft->gen;
		}
	}
	return 0;
}

int frametab__write(struct frametab *ft, uint32_t pid, FILE *out)
{
	struct fproc *p = ft_proc_of(ft, pid, false);
	int err = 0;

	if (!p)
		return 0;
	for (size_t i = 0; p->need_gen == ft->gen && i < p->nneed; i++) {
		const struct fframe *f = p->need[i];
		struct record r = { .type = REC_FRAME, .pid = (int)pid, .addr = f->addr,
				    .line = f->line, .function = f->function, .file = f->file };

		snprintf(r.kind, sizeof(r.kind), "%s", f->kind->name);
		if (records__write(out, &r))
			err = -EIO;
	}
	/* Ranges in address order: those marked. */
	ft_merge_jit(ft, &p->jit);
	for (size_t i = 0; i < p->jit.n; i++) {
		const struct jrange *j = &p->jit.v[i];
		struct record r = { .type = REC_JIT, .pid = (int)pid, .start = j->start,
				    .end = j->end, .function = j->name, .file = j->file,
				    .line = j->line, .addr = j->code };

		if (j->gen == ft->gen && records__write(out, &r))
			err = -EIO;
	}
	return err;
}

/* --- readers -------------------------------------------------------------------------- */

/* A `frame` record taken: its frame made, or remade if another record named it. */
static int take_frame(struct frametab *ft, const struct record *r)
{
	const struct fkind *kind = ft_kind_of(ft, r->kind);
	struct fproc *p = ft_proc_of(ft, (uint32_t)r->pid, true);
	char *fn = malloc(r->function_esc.len + 1), *fl = malloc(r->file_esc.len + 1);
	struct fframe *f;

	if (!kind) {
		free(fn);
		free(fl);
		return -EINVAL;
	}
	/* An escaped text is never shorter than its bytes. */
	if (!p || !fn || !fl || records__text(&r->function_esc, fn, r->function_esc.len + 1) < 0 ||
	    records__text(&r->file_esc, fl, r->file_esc.len + 1) < 0)
		goto nomem;
	f = ft_frame_at(p, r->addr);
	if (f && f->kind == kind && f->line == r->line && !strcmp(f->function, fn) &&
	    !strcmp(f->file, fl)) {
		free(fn);	/* the same again: each dump repeats its frames */
		free(fl);
		return 0;
	}
	if (f) {
		if (!f->kind)
			ft->missing--;
		if (ft_set_texts(ft, f, fn, fl))
			goto nomem;
	} else if (!(f = ft_add_frame(ft, p, r->addr, fn, fl))) {
		goto nomem;
	}
	f->kind = kind;
	f->line = r->line;
	return 0;
nomem:
	free(fn);
	free(fl);
	return -ENOMEM;
}

int frametab__take(struct frametab *ft, const struct record *r)
{
	struct fproc *p;
	char *name, *file;
	int err;

	if (r->type == REC_FRAME)
		return take_frame(ft, r);
	if (r->type != REC_JIT)
		return 1;
	p = ft_proc_of(ft, (uint32_t)r->pid, true);
	name = p ? malloc(r->function_esc.len + 1) : NULL;
	file = name ? malloc(r->file_esc.len + 1) : NULL;
	if (!file || records__text(&r->function_esc, name, r->function_esc.len + 1) < 0 ||
	    records__text(&r->file_esc, file, r->file_esc.len + 1) < 0) {
		free(name);
		free(file);
		return -ENOMEM;
	}
	err = ft_add_range(ft, p, r->start, r->end, name, file, r->line, r->addr);
	if (err) {
		free(name);
		free(file);
	}
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * pprof.c - heapdecode --pprof (see pprof.h): a sample for each (pid,
 * stack) of the model's join of the live set and the whole run (join.h),
 * each frame symbolized once per (pid, address) into a Location of
 * profbuild.h.
 * The sample types, in the order Go's heap profiles use, so that
 * `go tool pprof` treats it as one: alloc_objects, alloc_space,
 * inuse_objects, inuse_space (the first two only when the log has
 * whole-run `stack` records).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"

#include "framefmt.h"
#include "msg.h"
#include "outfile.h"
#include "pprof.h"
#include "profbuild.h"
#include "records.h"
#include "text.h"

enum { V_ALLOC_OBJECTS, V_ALLOC_SPACE, V_INUSE_OBJECTS, V_INUSE_SPACE, V__N };

/*
 * Is @map the program of process @pid? Its file is named as the process
 * (the kernel keeps 15 characters of the name).
 */
static bool is_program(struct hd_model *m, uint32_t pid, const struct mapping *map)
{
	const char *comm = hd_model__comm(m, pid), *base = path_base(map->path);
	size_t n = comm ? strlen(comm) : 0;

	return n && !strncmp(base, comm, n) && (base[n] == '\0' || n == 15);
}

/*
 * The Mapping of frames of kind @f->kind (not native code): "[python]"
 * over the synthetic addresses, "[jit]" over none (its ranges are many,
 * named by its functions); 0: no memory.
 */
static uint64_t kind_mapping(struct profbuild *b, const struct sym_frame *f)
{
	bool jit = !strcmp(f->kind, "jit");

	/* Keyed by the kind's module string: one per kind and log. */
	return profbuild__mapping(b, f->module, jit ? 0 : REC_FRAME_BASE, jit ? 0 : REC_FRAME_END,
				  0, f->module, "-");
}

/*
 * The Location of frame @addr of @pid, symbolized once; 0: no memory.
 * The first program mapping seen goes into *@prog_map.
 */
static uint64_t frame_location(struct hd_model *m, struct profbuild *b, uint32_t pid,
			       uint64_t addr, uint64_t *prog_map)
{
	struct prof_line lines[SYM_MAX_INLINE + 1];
	char names[SYM_MAX_INLINE + 1][512];
	const struct mapping *map;
	uint64_t id = profbuild__find_location(b, pid, addr), map_id = 0;
	struct sym_frame f;
	size_t n = 0;

	if (id)
		return id;
	hd_model__lookup(m, pid, addr, &f);
	/* The innermost inlined function first, the real one last. */
	for (int i = 0; f.status == SYM_OK && i < f.ninline; i++, n++) {
		const char *fn = f.inl[i].func ? f.inl[i].func : "??";

		snprintf(names[n], sizeof(names[n]), "%s", fn);
		lines[n] = (struct prof_line){ names[n], f.inl[i].file, f.inl[i].line };
	}
	/* Not native code: its function, and its line in Line.line. */
	if (f.status == SYM_OK && f.kind)
		snprintf(names[n], sizeof(names[n]), "%s", f.func);
	else
		hd_model__frame_name(&f, addr, names[n], sizeof(names[n]));
	lines[n] = (struct prof_line){ names[n], f.file, f.line };
	n++;
	map = f.kind ? NULL : hd_model__mapping(m, pid, addr);
	if (map && !(map_id = profbuild__mapping(b, map, map->start, map->end, map->offset,
						 map->path, map->build_id)))
		return 0;
	/* An interpreter's frames, or JIT code: one mapping of each kind, "[python]". */
	if (f.kind && !(map_id = kind_mapping(b, &f)))
		return 0;
	if (map && !*prog_map && is_program(m, pid, map))
		*prog_map = map_id;
	return profbuild__location(b, pid, addr, map_id, lines, n);
}

/*
 * A frame of no address (a mark, a process), named @name, shared by all
 * the samples that have it: @kind and @n tell them apart; 0: no memory.
 */
static uint64_t mark_location(struct profbuild *b, uint32_t kind, uint64_t n, const char *name)
{
	uint64_t id = profbuild__find_location(b, kind, n);
	struct prof_line line = { name, NULL, 0 };

	return id ? id : profbuild__location(b, kind, n, 0, &line, 1);
}

#define MARK_CUT	0xffffffffu	/* [stack truncated] roots, by flags */
#define MARK_PID	0xfffffffeu	/* --by pid roots, by pid */

/* One sample for stack @s with values @v; 0 or -ENOMEM. */
static int add_sample(struct hd_model *m, struct profbuild *b, const struct hd_pprof_opts *o,
		      const struct stack *s, uint32_t flags, const int64_t *v, uint64_t *prog_map)
{
	static uint64_t locs[REC_MAX_DEPTH + 2];
	size_t n = 0;
	const char *comm = hd_model__comm(m, s->pid);
	struct prof_label labels[2] = { { "pid", NULL, s->pid }, { "comm", comm, 0 } };
	char name[64];

	for (uint32_t k = 0; k < s->depth; k++)
		if (!(locs[n++] = frame_location(m, b, s->pid, s->frames[k], prog_map)))
			return -ENOMEM;
	/* No process named: the program is where a complete stack starts (_start). */
	if (!*prog_map && s->depth && !*framefmt__cut(flags) && !comm) {
		const struct mapping *map = hd_model__mapping(m, s->pid, s->frames[s->depth - 1]);

		if (map)
			*prog_map = profbuild__mapping(b, map, map->start, map->end, map->offset,
						       map->path, map->build_id);
	}
	/* An incomplete stack's root is its mark, as in --folded. */
	if (*framefmt__cut(flags) || !s->depth) {
		snprintf(name, sizeof(name), "[%s]", s->depth ? framefmt__cut(flags) : "no stack");
		if (!(locs[n++] = mark_location(b, MARK_CUT, flags, name)))
			return -ENOMEM;
	}
	if (o->pid_root) {
		snprintf(name, sizeof(name), "pid %u (%s)", s->pid, comm ? comm : "?");
		if (!(locs[n++] = mark_location(b, MARK_PID, s->pid, name)))
			return -ENOMEM;
	}
	return profbuild__sample(b, locs, n, v, labels, comm ? 2 : 1);
}

/* @e's sample values, in the order of the types. */
static void values_of(const struct hd_joined *e, int64_t *v)
{
	v[V_ALLOC_OBJECTS] = e->run ? (int64_t)e->run->allocs : 0;
	v[V_ALLOC_SPACE] = e->run ? (int64_t)e->run->alloc_bytes : 0;
	v[V_INUSE_OBJECTS] = (int64_t)e->live_count;
	v[V_INUSE_SPACE] = (int64_t)e->live_bytes;
}

int hd_pprof__write(struct hd_model *m, const struct hd_pprof_opts *o, FILE *out)
{
	static const struct prof_type types[] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	const struct hd_joined *joined;
	struct profbuild *b = NULL;
	uint64_t prog_map = 0;	/* the program's mapping: pprof's main binary */
	bool whole_run = false;
	unsigned int nd;
	const int64_t *t = hd_model__dump_times(m, &nd);
	char comment[128];
	size_t n, first;
	int err = hd_model__join(m, &joined, &n);

	for (size_t i = 0; i < n; i++)
		whole_run |= joined[i].run != NULL;
	first = whole_run ? 0 : V_INUSE_OBJECTS;
	if (!err)
		b = profbuild__new(types + first, V__N - first, "inuse_space");
	err = err ? err : b ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		int64_t v[V__N];
		bool any = false;

		values_of(&joined[i], v);
		for (size_t k = first; k < V__N; k++)
			any |= v[k] != 0;
		if (o->pid && joined[i].stack->pid != o->pid)
			any = false;
		if (any)
			err = add_sample(m, b, o, joined[i].stack, joined[i].flags, v + first,
					 &prog_map);
	}
	snprintf(comment, sizeof(comment), "heapsnoop: live heap at dump %u%s", nd,
		 hd_model__is_diff(m) ? ", minus the baseline" : "");
	if (!err) {
		profbuild__main_mapping(b, prog_map);
		err = profbuild__write(b, out, nd ? t[nd] * 1000000 : 0, comment);
	}
	profbuild__free(b);
	return err;
}

/* @pattern with "%p" replaced by @pid, a malloc'ed string; NULL: no memory. */
static char *path_for(const char *pattern, uint32_t pid)
{
	const char *p = strstr(pattern, "%p");
	char *path;

	if (asprintf(&path, "%.*s%u%s", (int)(p - pattern), pattern, pid, p + 2) < 0)
		return NULL;
	return path;
}

int hd_pprof__write_each(struct hd_model *m, const struct hd_pprof_opts *o, const char *pattern)
{
	size_t n = 0;
	uint32_t *pids = hd_model__pids(m, &n);
	int err = pids ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < n; i++) {
		struct hd_pprof_opts po = *o;
		char *path = path_for(pattern, pids[i]);
		struct outfile *of = path ? outfile__open(path) : NULL;
		FILE *f = of ? outfile__start(of) : NULL;

		po.pid = pids[i];
		err = !path ? -ENOMEM : !f ? -EIO : hd_pprof__write(m, &po, f);
		if (err && f)
			elog("writing %s failed: %s", path, hs_strerror(err));
		if (outfile__close(of) && !err)
			err = -EIO;
		free(path);
	}
	if (err == -ENOMEM)
		elog("out of memory");
	if (!err && !n)
		elog("%s: no process has stacks in the input: no profile written", pattern);
	free(pids);
	return err ? -1 : 0;
}

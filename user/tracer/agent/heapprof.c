// SPDX-License-Identifier: MIT
/*
 * heapprof.c - the agent's heap profile (see heapprof.h): each process's
 * stacks (stacktree.h) with their counts (acct.h) into profbuild.h's
 * samples, each frame a Location symbolized once per (pid, address), as
 * heapdecode's pprof.c does from a log.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framefmt.h"
#include "frametab.h"
#include "heapprof.h"
#include "profbuild.h"
#include "records.h"
#include "symbolizer.h"
#include "text.h"
#include "track/trace.h"

enum { V_ALLOC_OBJECTS, V_ALLOC_SPACE, V_INUSE_OBJECTS, V_INUSE_SPACE, V__N };

#define MARK_CUT	0xffffffffu	/* "[truncated]" roots, by flags (pprof.c's) */

struct hp {
	struct trace *t;
	struct profbuild *b;
	struct symbolizer *sym;
	const struct proc *p;
	uint64_t prog_map;	/* the first program mapping: pprof's main binary */
	double deadline;	/* CLOCK_MONOTONIC s: frames after it left unnamed */
	uint64_t unnamed;	/* ... how many */
	int err;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Is @m the program of @p (its file named as the process)? pprof.c's rule. */
static bool is_program(const struct proc *p, const struct mapping *m)
{
	const char *base = path_base(m->path);
	size_t n = strlen(p->comm);

	return n && !strncmp(base, p->comm, n) && (base[n] == '\0' || n == 15);
}

/* The Location of frame @addr of the process, symbolized once; 0: no memory. */
static uint64_t location(struct hp *h, uint64_t addr)
{
	const struct proc *p = h->p;
	struct prof_line lines[SYM_MAX_INLINE + 1];
	char names[SYM_MAX_INLINE + 1][512];
	const struct mapping *m = NULL;
	uint64_t id = profbuild__find_location(h->b, (uint32_t)p->pid, addr), map_id = 0;
	struct sym_frame f = { .status = SYM_NO_SYMBOL };
	size_t n = 0;

	if (id)
		return id;
	if (!frametab__symbolize(trace__frames(h->t), (uint32_t)p->pid, addr, &f)) {
		m = p->maps ? mapset__find(p->maps, addr) : NULL;
		if (m && !h->sym)
			h->sym = symbolizer__new(NULL);
		if (m && now_s() > h->deadline) {
			h->unnamed++;
			f = (struct sym_frame){ .status = SYM_NO_SYMBOL };
		} else if (!m || !h->sym || symbolizer__lookup(h->sym, m, addr, true, &f)) {
			f = (struct sym_frame){ .status = SYM_NO_SYMBOL };
		}
	}
	/* The innermost inlined function first, the real one last. */
	for (int i = 0; f.status == SYM_OK && i < f.ninline; i++, n++) {
		snprintf(names[n], sizeof(names[n]), "%s", f.inl[i].func ? f.inl[i].func : "??");
		lines[n] = (struct prof_line){ names[n], f.inl[i].file, f.inl[i].line };
	}
	if (f.status == SYM_OK && f.func)
		snprintf(names[n], sizeof(names[n]), "%s", f.func);
	else if (m)
		snprintf(names[n], sizeof(names[n]), "%s+0x%llx", path_base(m->path),
			 (unsigned long long)(addr - m->start + m->offset));
	else
		snprintf(names[n], sizeof(names[n]), "0x%llx", (unsigned long long)addr);
	lines[n] = (struct prof_line){ names[n], f.status == SYM_OK ? f.file : NULL,
				       f.status == SYM_OK ? f.line : 0 };
	n++;
	if (m && !(map_id = profbuild__mapping(h->b, m, m->start, m->end, m->offset, m->path,
					       m->build_id)))
		return 0;
	if (m && !h->prog_map && is_program(p, m))
		h->prog_map = map_id;
	return profbuild__location(h->b, (uint32_t)p->pid, addr, map_id, lines, n);
}

/* stack_tree__for_each(): stack @id of the process, a sample if it counts. */
static int add_stack(void *ctx, uint32_t id)
{
	static uint64_t frames[REC_MAX_DEPTH], locs[REC_MAX_DEPTH + 1];
	struct hp *h = ctx;
	const struct proc *p = h->p;
	struct acct_counts c;
	struct prof_label labels[2] = { { "pid", NULL, p->pid }, { "comm", p->comm, 0 } };
	int64_t v[V__N];
	uint32_t n, flags;
	size_t k = 0;

	acct__counts(&p->acct, id, &c);
	if (!c.allocs && !c.live_count)
		return 0;
	v[V_ALLOC_OBJECTS] = (int64_t)c.allocs;
	v[V_ALLOC_SPACE] = (int64_t)c.alloc_bytes;
	v[V_INUSE_OBJECTS] = (int64_t)c.live_count;
	v[V_INUSE_SPACE] = (int64_t)c.live_bytes;
	n = stack_tree__frames(p->stacks, id, frames);
	flags = stack_tree__flags(p->stacks, id);
	for (uint32_t i = 0; i < n; i++)
		if (!(locs[k++] = location(h, frames[i])))
			return -ENOMEM;
	/* An incomplete stack's root is its mark, as heapdecode --pprof's. */
	if (*framefmt__cut(flags) || !n) {
		struct prof_line line = { NULL, NULL, 0 };
		char name[64];
		uint64_t mark = profbuild__find_location(h->b, MARK_CUT, flags);

		snprintf(name, sizeof(name), "[%s]", n ? framefmt__cut(flags) : "no stack");
		line.func = name;
		if (!mark)
			mark = profbuild__location(h->b, MARK_CUT, flags, 0, &line, 1);
		if (!(locs[k++] = mark))
			return -ENOMEM;
	}
	return profbuild__sample(h->b, locs, k, v, labels, p->comm[0] ? 2 : 1);
}

int heapprof__write(struct trace *t, pid_t pid, FILE *out)
{
	static const struct prof_type types[] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	struct hp h = { .t = t };
	struct proc **v;
	struct timespec now;
	char comment[128];
	size_t n = 0;
	int err = 0;

	h.deadline = now_s() + HEAPPROF_NAMING_S;
	h.b = profbuild__new(types, V__N, "inuse_space");
	if (!h.b)
		return -ENOMEM;
	v = trace__procs(t, &n);
	for (size_t i = 0; !err && i < n; i++) {
		if (pid && v[i]->pid != pid)
			continue;
		h.p = v[i];
		err = stack_tree__for_each(v[i]->stacks, false, add_stack, &h);
	}
	if (!err && n && !v)
		err = -ENOMEM;
	if (!err) {
		clock_gettime(CLOCK_REALTIME, &now);
		snprintf(comment, sizeof(comment), "heapsnoop agent: live heap%s%.0llu%s; "
			 "%llu frames left unnamed past %d s", pid ? " of pid " : "",
			 (unsigned long long)pid,
			 trace__sample_bytes(t) ? ", sampled (byte values estimated)" : "",
			 (unsigned long long)h.unnamed, HEAPPROF_NAMING_S);
		profbuild__main_mapping(h.b, h.prog_map);
		err = profbuild__write(h.b, out, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
				       comment);
	}
	free(v);
	symbolizer__free(h.sym);
	profbuild__free(h.b);
	return err;
}

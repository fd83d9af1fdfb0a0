// SPDX-License-Identifier: MIT
/*
 * heapprof.c - the agent's heap profile (see heapprof.h): each process's
 * stacks (stacktree.h) with their counts (acct.h) into profbuild.h's
 * samples, each frame a Location symbolized once per (pid, address), as
 * heapdecode's pprof.c does from a log; then each collector's table
 * (collectors.h), its live blocks grouped by stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framefmt.h"
#include "frametab.h"
#include "collectors.h"
#include "heapprof.h"
#include "profbuild.h"
#include "records.h"
#include "sampling.h"
#include "symbolizer.h"
#include "text.h"
#include "track/trace.h"

enum { V_ALLOC_OBJECTS, V_ALLOC_SPACE, V_INUSE_OBJECTS, V_INUSE_SPACE, V__N };

#define MARK_CUT	0xffffffffu	/* "[truncated]" roots, by flags (pprof.c's) */

struct hp {
	struct trace *t;
	struct profbuild *b;
	struct symbolizer *sym;
	const struct proc *p;	/* a traced process's stacks, or NULL: a collector's */
	/* The process whose frames are named: its pid, name, mappings, source. */
	pid_t pid;
	const char *comm;
	const struct mapset *maps;
	const char *source;
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

/* Is @m the program of @comm (its file named as the process)? pprof.c's rule. */
static bool is_program(const char *comm, const struct mapping *m)
{
	const char *base = path_base(m->path);
	size_t n = strlen(comm);

	return n && !strncmp(base, comm, n) && (base[n] == '\0' || n == 15);
}

/* The Location of frame @addr of the process, symbolized once; 0: no memory. */
static uint64_t location(struct hp *h, uint64_t addr)
{
	struct prof_line lines[SYM_MAX_INLINE + 1];
	char names[SYM_MAX_INLINE + 1][512];
	const struct mapping *m = NULL;
	uint64_t id = profbuild__find_location(h->b, (uint32_t)h->pid, addr), map_id = 0;
	struct sym_frame f = { .status = SYM_NO_SYMBOL };
	size_t n = 0;

	if (id)
		return id;
	/* A traced process's interpreter frames are the trace's; a collector's are not named. */
	if (!h->p || !frametab__symbolize(trace__frames(h->t), (uint32_t)h->pid, addr, &f)) {
		m = h->maps ? mapset__find(h->maps, addr) : NULL;
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
	if (m && !h->prog_map && is_program(h->comm, m))
		h->prog_map = map_id;
	return profbuild__location(h->b, (uint32_t)h->pid, addr, map_id, lines, n);
}

/*
 * One sample: @n frames (innermost first), cut bits @flags, values @v,
 * labelled pid, comm and source.
 */
static int sample(struct hp *h, const uint64_t *frames, uint32_t n, uint32_t flags,
		  const int64_t *v)
{
	static uint64_t locs[REC_MAX_DEPTH + 1];
	struct prof_label labels[3] = { { "pid", NULL, h->pid }, { "source", h->source, 0 },
					{ "comm", h->comm, 0 } };
	size_t k = 0;

	if (n > REC_MAX_DEPTH)
		n = REC_MAX_DEPTH;
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
	return profbuild__sample(h->b, locs, k, v, labels, h->comm[0] ? 3 : 2);
}

/* stack_tree__for_each(): stack @id of the process, a sample if it counts. */
static int add_stack(void *ctx, uint32_t id)
{
	static uint64_t frames[REC_MAX_DEPTH];
	struct hp *h = ctx;
	const struct proc *p = h->p;
	struct acct_counts c;
	int64_t v[V__N];

	acct__counts(&p->acct, id, &c);
	if (!c.allocs && !c.live_count)
		return 0;
	v[V_ALLOC_OBJECTS] = (int64_t)c.allocs;
	v[V_ALLOC_SPACE] = (int64_t)c.alloc_bytes;
	v[V_INUSE_OBJECTS] = (int64_t)c.live_count;
	v[V_INUSE_SPACE] = (int64_t)c.live_bytes;
	return sample(h, frames, stack_tree__frames(p->stacks, id, frames),
		      stack_tree__flags(p->stacks, id), v);
}

/* --- a collector's table -------------------------------------------------- */

static int by_stack(const void *a, const void *b)
{
	const struct lt_item *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* lt_modules(): one module record as a mapping of the process. */
static int add_module(void *arg, const struct lt_mod *lm)
{
	struct mapping m = { .start = lm->start, .end = lm->end, .offset = lm->off,
			     .path = (char *)lm->path };

	if (lm->end <= lm->start)
		return 0;
	snprintf(m.build_id, sizeof(m.build_id), "%s", lm->build_id[0] ? lm->build_id : "-");
	return mapset__add(arg, &m) ? -ENOMEM : 0;
}

/*
 * Collector @col's live set (lt_snap__take(): one walk of its table) as
 * samples, one per stack: inuse values only (a table keeps no totals:
 * its alloc values are 0), bytes estimated with its sampling mean.
 */
static int heapprof__collector(struct hp *h, const struct collector *col)
{
	static uint64_t words[LT_MAX_DEPTH];
	uint64_t mean = __atomic_load_n(&col->view.h->sample_bytes, __ATOMIC_RELAXED);
	struct mapset *maps = mapset__new(col->pid);
	struct lt_snap snap;
	int err = 0;

	if (!maps)
		return -ENOMEM;
	if (lt_modules(&col->view, add_module, maps) || lt_snap__take(&snap, &col->view, col->pid)) {
		mapset__free(maps);
		return -ENOMEM;
	}
	qsort(snap.items, snap.n, sizeof(*snap.items), by_stack);
	h->p = NULL;
	h->pid = col->pid;
	h->comm = col->comm;
	h->maps = maps;
	h->source = "collector";
	for (uint64_t i = 0, j; !err && i < snap.n; i = j) {
		int64_t v[V__N] = { 0 };
		uint32_t depth = 0, cut = 0;

		for (j = i; j < snap.n && snap.items[j].stack == snap.items[i].stack; j++) {
			v[V_INUSE_OBJECTS]++;
			v[V_INUSE_SPACE] += (int64_t)(mean ? sample_estimate(snap.items[j].size, mean) :
						      snap.items[j].size);
		}
		if (snap.items[i].stack &&
		    lt_stack__words(&col->view, snap.items[i].stack, words, &depth, &cut))
			depth = 0, cut = 0;
		err = sample(h, words, depth, cut, v);
	}
	lt_snap__free(&snap);
	mapset__free(maps);
	h->maps = NULL;
	return err;
}

/* The collectors' tables every profile adds (heapprof__set_collectors()). */
static const struct collectors *coll;

void heapprof__set_collectors(const struct collectors *c)
{
	coll = c;
}

int heapprof__write(struct trace *t, pid_t pid, FILE *out)
{
	return heapprof__write_for(t, pid, NULL, out);
}

int heapprof__write_for(struct trace *t, pid_t pid, const char *comm, FILE *out)
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
		if ((pid && v[i]->pid != pid) || (comm && *comm && strcmp(v[i]->comm, comm)))
			continue;
		h.p = v[i];
		h.pid = v[i]->pid;
		h.comm = v[i]->comm;
		h.maps = v[i]->maps;
		h.source = "bpf";
		err = stack_tree__for_each(v[i]->stacks, false, add_stack, &h);
	}
	h.p = NULL;
	for (size_t i = 0; !err && i < collectors__count(coll); i++) {
		const struct collector *col = collectors__get(coll, i);

		if ((!pid || col->pid == pid) && (!comm || !*comm || !strcmp(col->comm, comm)))
			err = heapprof__collector(&h, col);
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

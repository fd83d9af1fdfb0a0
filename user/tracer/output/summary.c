// SPDX-License-Identifier: MIT
/*
 * summary.c - the -s summary from each process's live stacks (see
 * summary.h): what dump.c wrote from the tracker alone, now from
 * copies both the tracker and --preload's live tables make.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "framefmt.h"
#include "msg.h"
#include "records.h"
#include "rtsummary.h"
#include "stackview.h"
#include "summary.h"
#include "text.h"

struct summary {
	struct sum_proc **v;
	size_t n, cap;
};

struct summary *summary__new(void)
{
	return calloc(1, sizeof(struct summary));
}

void summary__free(struct summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		mapset__free(s->v[i]->own_maps);
		free(s->v[i]->v);
		free(s->v[i]->frames);
		free(s->v[i]);
	}
	free(s->v);
	free(s);
}

struct sum_proc *summary__proc(struct summary *s, int pid, const char *comm)
{
	struct sum_proc *p;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct sum_proc **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	p->peak_ago_ms = -1;
	s->v[s->n++] = p;
	return p;
}

/* Room for one more stack in @p->v: 0 or -ENOMEM. */
static int stack_room(struct sum_proc *p)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct sum_stack *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	return 0;
}

int sum_proc__stack(struct sum_proc *p, const uint64_t *frames, uint32_t depth, uint32_t cut,
		    uint64_t bytes, uint64_t count)
{
	if (stack_room(p))
		return -ENOMEM;
	if (p->nframes + depth > p->frames_cap) {
		size_t cap = p->frames_cap ? 2 * p->frames_cap : 256;
		uint64_t *f;

		while (cap < p->nframes + depth)
			cap *= 2;
		f = realloc(p->frames, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		p->frames = f;
		p->frames_cap = cap;
	}
	if (depth)
		memcpy(p->frames + p->nframes, frames, depth * sizeof(*frames));
	p->v[p->n++] = (struct sum_stack){ .at = p->nframes, .depth = depth, .cut = cut,
					   .bytes = bytes, .count = count };
	p->nframes += depth;
	return 0;
}

void sum_proc__source(struct sum_proc *p, sum_frames_fn fn, void *ctx)
{
	p->src = fn;
	p->src_ctx = ctx;
}

int sum_proc__stack_ref(struct sum_proc *p, uint64_t ref, uint32_t depth, uint32_t cut,
			uint64_t bytes, uint64_t count)
{
	if (stack_room(p))
		return -ENOMEM;
	p->v[p->n++] = (struct sum_stack){ .at = ref, .depth = depth, .cut = cut,
					   .bytes = bytes, .count = count };
	return 0;
}

const uint64_t *sum_proc__frames(const struct sum_proc *p, const struct sum_stack *s,
				 uint64_t *buf)
{
	uint32_t n;

	if (!p->src)
		return p->frames + s->at;
	n = p->src(p->src_ctx, s->at, buf);
	/* The same stack as when it was added (nothing changes it meanwhile): else none past it. */
	for (uint32_t k = n; k < s->depth && k < REC_MAX_DEPTH; k++)
		buf[k] = 0;
	return buf;
}

void sum_proc__maps(struct sum_proc *p, const struct mapset *maps)
{
	p->maps = maps;
}

int sum_proc__map(struct sum_proc *p, const struct mapping *m)
{
	if (!p->own_maps) {
		p->own_maps = mapset__new(p->pid);
		if (!p->own_maps)
			return -ENOMEM;
		p->maps = p->own_maps;
	}
	return mapset__add(p->own_maps, m);
}

/* What naming a frame of one process takes (holders.h's lookup). */
struct namer {
	holders_lookup_fn name;
	void *ctx;
	struct symbolizer *sym;
	const struct sum_proc *p;
	uint64_t *buf;		/* a stack's frames read from its source (REC_MAX_DEPTH) */
};

static bool name_frame(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	const struct namer *nm = ctx;
	const struct mapping *m = nm->p->maps ? mapset__find(nm->p->maps, addr) : NULL;

	/*
	 * A frame that is not native code (an interpreter's, or JIT code its
	 * perf map named) is named by the caller, the others by their file.
	 */
	return (nm->name && nm->name(nm->ctx, pid, addr, f)) ||
	       (nm->sym && !symbolizer__lookup(nm->sym, m, addr, true, f));
}

/* The C runtime's list names frames as suppress.h's lookup: unnamed, no symbol. */
static void rt_lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	if (!name_frame(ctx, pid, addr, f))
		*f = (struct sym_frame){ .status = SYM_NO_SYMBOL };
}

/* Does @a come before @b: more live bytes, then more allocations? */
static bool before(const struct sum_stack *a, const struct sum_stack *b)
{
	return a->bytes != b->bytes ? a->bytes > b->bytes : a->count > b->count;
}

/* One process's top stacks, @top at most; returns how many it wrote. */
static unsigned int write_proc(struct namer *nm, const struct sum_proc *p, FILE *out,
			       unsigned int top, bool full)
{
	const struct sum_stack **v = calloc(top ? top : 1, sizeof(*v));
	unsigned int k = 0;

	if (!v)
		return 0;
	/* The @top biggest, kept in order as they go by. */
	for (size_t i = 0; top && i < p->n; i++) {
		const struct sum_stack *e = &p->v[i];
		unsigned int j;

		if (!e->count || e->runtime || (k == top && !before(e, v[top - 1])))
			continue;
		j = k < top ? k++ : top - 1;
		for (; j && before(e, v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = e;
	}
	nm->p = p;
	for (unsigned int i = 0; i < k; i++) {
		const char *cut = framefmt__cut(v[i]->cut);
		char size[32];

		fprintf(out, "    %s in %" PRIu64 " allocations from pid %d%s%s%s:\n",
			text_size(v[i]->bytes, false, size), v[i]->count, p->pid, *cut ? " (" : "",
			cut, *cut ? ")" : "");
		stackview__write(out, "        ", (uint32_t)p->pid, sum_proc__frames(p, v[i], nm->buf),
				 v[i]->depth, full, name_frame, nm);
	}
	free(v);
	return k;
}

/*
 * The headline, the answer first: the biggest holder over the @n
 * processes @v (holders.h), the C runtime's stacks left out, or that
 * nothing is live.
 */
static void headline(struct namer *nm, struct sum_proc *const *v, size_t n, FILE *out)
{
	struct holders *h = holders__new(name_frame, nm, false);
	char line[1024];
	int err = h ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && !err; i++) {
		nm->p = v[i];
		for (size_t k = 0; k < v[i]->n && !err; k++) {
			const struct sum_stack *s = &v[i]->v[k];

			if (!s->count || s->runtime)
				continue;
			err = holders__add(h, (uint32_t)v[i]->pid, sum_proc__frames(v[i], s, nm->buf),
					   s->depth, s->bytes, s->count,
					   *framefmt__cut(s->cut) ? s->count : 0);
		}
	}
	if (err)
		elog("out of memory naming the biggest holder");
	else if (holders__headline(h, "biggest holder", line, sizeof(line)))
		flog(out, "%s", line);
	else
		flog(out, "biggest holder: none, nothing is live");
	holders__free(h);
}

static int by_live(const void *a, const void *b)
{
	const struct sum_proc *x = *(struct sum_proc *const *)a, *y = *(struct sum_proc *const *)b;

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const char *comm_of(const struct sum_proc *p)
{
	return p->comm[0] ? p->comm : "?";
}

void summary__write(struct summary *s, struct symbolizer *sym, holders_lookup_fn name, void *ctx,
		    unsigned int top, const struct summary_opts *so, FILE *out)
{
	struct namer nm = { name, ctx, sym, NULL, malloc(REC_MAX_DEPTH * sizeof(uint64_t)) };
	struct suppress_tally all = { 0 };
	size_t with_live = 0, stacks = 0;
	uint64_t count = 0, bytes = 0;
	unsigned int left = top;
	char size[32];

	if (!nm.buf) {
		elog("out of memory writing the summary");
		return;
	}
	/* Most live bytes first, those with none last. */
	qsort(s->v, s->n, sizeof(*s->v), by_live);
	for (size_t i = 0; i < s->n; i++) {
		count += s->v[i]->live_count;
		bytes += s->v[i]->live_bytes;
		stacks += s->v[i]->stacks;
		with_live += s->v[i]->live_count != 0;
	}
	/* The C runtime's stacks named with their process's mappings, one at a time. */
	for (size_t i = 0; i < with_live; i++) {
		nm.p = s->v[i];
		rt_summary__mark(&s->v[i], 1, rt_lookup, &nm, so, &all);
	}
	headline(&nm, s->v, with_live, out);
	flog(out, "summary: %" PRIu64 " live allocations, %s, from %zu stacks"
		" in %zu process(es) (top %u stacks by live bytes)", count,
		text_size(bytes, false, size), stacks, with_live, top);
	if (with_live > 1) {
		/* Several processes: who holds what first, then where from. */
		fprintf(out, "  processes by live bytes:\n");
		for (size_t i = 0; i < with_live && i < top; i++)
			fprintf(out, "    pid %d (%s): %s in %" PRIu64 " allocations, %zu stacks\n",
				s->v[i]->pid, comm_of(s->v[i]),
				text_size(s->v[i]->live_bytes, false, size), s->v[i]->live_count,
				s->v[i]->stacks);
	}
	/* Each process's share of the top stacks, largest processes first. */
	for (size_t i = 0; i < with_live && left; i++) {
		if (with_live > 1)
			fprintf(out, "  pid %d (%s):\n", s->v[i]->pid, comm_of(s->v[i]));
		left -= write_proc(&nm, s->v[i], out, with_live > 1 && left > 3 ? 3 : left,
				   so && so->full_stacks);
	}
	rt_summary__write(&all, s->v, s->n, so, out);
	fflush(out);
	free(nm.buf);
}

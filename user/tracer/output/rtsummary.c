// SPDX-License-Identifier: MIT
/*
 * rtsummary.c - the -s summary's lines apart from the program's stacks
 * (see rtsummary.h). Only stacks with live blocks are looked at, and
 * only their innermost frames that lie in the C runtime are symbolized
 * (suppress__stack()): usually frame 0 alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "frametab.h"
#include "msg.h"
#include "pyexit.h"
#include "rtsummary.h"
#include "suppress.h"

/* One process's C runtime stacks, ascending. */
struct rt_ids {
	uint32_t *id;
	size_t n, cap;
};

struct rt_summary {
	struct rt_ids *procs;	/* by index in the processes given, */
	size_t n;		/* of which there are n */
	struct suppress_tally all;
};

struct walk_ctx {
	struct frametab *ft;
	const struct proc *p;
	struct symbolizer *sym;
	struct stack *s;	/* one stack's room, REC_MAX_DEPTH frames */
	struct rt_ids *ids;
	struct suppress_tally *all;
	int err;
};

static void lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	const struct walk_ctx *c = ctx;
	const struct mapping *m = c->p->maps ? mapset__find(c->p->maps, addr) : NULL;

	if (frametab__symbolize(c->ft, pid, addr, f))
		return;
	if (symbolizer__lookup(c->sym, m, addr, true, f))
		*f = (struct sym_frame){ .status = SYM_NO_SYMBOL };
}

static int walk_stack(void *ctx, uint32_t id)
{
	struct walk_ctx *c = ctx;
	struct acct_counts v;
	int i;

	acct__counts(&c->p->acct, id, &v);
	if (!v.live_count)
		return 0;
	c->s->pid = (uint32_t)c->p->pid;
	c->s->depth = stack_tree__frames(c->p->stacks, id, c->s->frames);
	i = suppress__stack(suppress__runtime(), c->s, lookup, c);
	if (i < 0)
		return 0;
	suppress__tally_add(c->all, i, v.live_bytes, v.live_count);
	if (c->ids->n == c->ids->cap) {
		size_t cap = c->ids->cap ? 2 * c->ids->cap : 8;
		uint32_t *nv = realloc(c->ids->id, cap * sizeof(*nv));

		if (!nv) {
			c->err = -ENOMEM;
			return c->err;
		}
		c->ids->id = nv;
		c->ids->cap = cap;
	}
	c->ids->id[c->ids->n++] = id;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct rt_summary *rt_summary__new(struct frametab *ft, struct proc **v, size_t n,
				   struct symbolizer *sym, const struct summary_opts *so)
{
	struct rt_summary *r;
	struct walk_ctx c = { .ft = ft, .sym = sym };

	if (!so || !so->runtime_apart || !sym || !n)
		return NULL;
	r = calloc(1, sizeof(*r));
	c.s = calloc(1, sizeof(*c.s) + REC_MAX_DEPTH * sizeof(*c.s->frames));
	if (r) {
		r->procs = calloc(n, sizeof(*r->procs));
		r->n = r->procs ? n : 0;
	}
	if (!r || !r->procs || !c.s)
		goto fail;
	c.all = &r->all;
	for (size_t i = 0; i < n; i++) {
		if (!tracker__count(v[i]->live))
			continue;
		c.p = v[i];
		c.ids = &r->procs[i];
		if (stack_tree__for_each(v[i]->stacks, false, walk_stack, &c) || c.err)
			goto fail;
		/* The walk's order is the tree's: sorted for bsearch. */
		qsort(c.ids->id, c.ids->n, sizeof(*c.ids->id), by_id);
	}
	free(c.s);
	return r;
fail:
	elog("out of memory: the C runtime's allocations are shown among the program's");
	free(c.s);
	rt_summary__free(r);
	return NULL;
}

void rt_summary__free(struct rt_summary *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->procs && i < r->n; i++)
		free(r->procs[i].id);
	free(r->procs);
	free(r);
}

bool rt_summary__has(const struct rt_summary *r, size_t i, uint32_t id)
{
	return r && i < r->n && r->procs[i].n &&
	       bsearch(&id, r->procs[i].id, r->procs[i].n, sizeof(id), by_id);
}

void rt_summary__write(const struct rt_summary *r, struct proc **v, size_t n,
		       const struct summary_opts *so, FILE *out)
{
	struct timespec now;
	char line[512];

	if (r && r->all.count)
		flog(out, "the C runtime's own, not above: %s, kept for the process's lifetime "
		     "(--no-default-suppressions shows them)",
		     suppress__tally_text(&r->all, line, sizeof(line)));
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < n; i++) {
		const struct proc *p = v[i];
		uint64_t ns = (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
		int64_t ago = p->acct.peak_ns && ns > p->acct.peak_ns ?
			      (int64_t)((ns - p->acct.peak_ns) / 1000000) : -1;

		if (p->allocated && pyexit__freed(p->comm, p->acct.peak_bytes, p->live_estimate))
			flog(out, "%s", pyexit__text(line, sizeof(line), p->pid, p->comm,
						     p->acct.peak_bytes, p->acct.peak_count, ago,
						     p->live_estimate, so ? so->log : NULL));
	}
}

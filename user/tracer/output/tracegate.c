// SPDX-License-Identifier: MIT
/*
 * tracegate.c - the tracer's side of the CI gates (see tracegate.h): processes in,
 * frames symbolized through each process's last known mappings, the
 * verdict folded into the exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "tracegate.h"
#include "heapsnoop/exit.h"
#include "leakgate.h"
#include "msg.h"

struct gate {
	struct leakgate *lg;
	struct symbolizer *sym;
	bool failed;	/* out of memory on the way: the verdict is not trusted */
};

int gate__new(const struct leakgate_opts *o, struct gate **out)
{
	struct gate *g;

	*out = NULL;
	if (!leakgate__wanted(o))
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g) {
		elog("out of memory");
		return -ENOMEM;
	}
	g->lg = leakgate__new(o);
	g->sym = g->lg ? symbolizer__new(NULL) : NULL;
	if (!g->sym) {
		if (g->lg)
			elog("out of memory");
		gate__free(g);
		return -EINVAL;
	}
	*out = g;
	return 0;
}

void gate__free(struct gate *g)
{
	if (!g)
		return;
	leakgate__free(g->lg);
	symbolizer__free(g->sym);
	free(g);
}

struct lookup_ctx {
	struct gate *g;
	const struct proc *p;
};

static void lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	const struct lookup_ctx *c = ctx;
	const struct mapping *m = c->p->maps ? mapset__find(c->p->maps, addr) : NULL;

	(void)pid;
	if (symbolizer__lookup(c->g->sym, m, addr, true, f))
		*f = (struct sym_frame){ .status = SYM_NO_SYMBOL };
}

struct stack_ctx {
	struct gate *g;
	const struct proc *p;
	struct stack *s;	/* one stack's room, REC_MAX_DEPTH frames */
};

/* A stack with live blocks, whole, to the leak gate. */
static int gate_stack(void *ctx, uint32_t id)
{
	struct stack_ctx *c = ctx;
	struct lookup_ctx lc = { c->g, c->p };
	struct acct_counts v;

	acct__counts(&c->p->acct, id, &v);
	if (!v.live_count)
		return 0;
	c->s->pid = (uint32_t)c->p->pid;
	c->s->flags = stack_tree__flags(c->p->stacks, id);
	c->s->live_count = v.live_count;
	c->s->live_bytes = v.live_bytes;
	c->s->depth = stack_tree__frames(c->p->stacks, id, c->s->frames);
	return leakgate__stack(c->g->lg, c->s, c->p->comm, lookup, &lc);
}

void gate__proc(struct gate *g, const struct proc *p)
{
	struct stack_ctx c = { g, p, NULL };

	if (!g || !p->allocated)
		return;
	leakgate__peak(g->lg, (uint32_t)p->pid, p->comm, p->acct.peak_bytes,
		       p->acct.peak_count);
	if (!tracker__count(p->live))
		return;
	c.s = calloc(1, sizeof(*c.s) + REC_MAX_DEPTH * sizeof(*c.s->frames));
	if (!c.s || stack_tree__for_each(p->stacks, false, gate_stack, &c))
		g->failed = true;
	free(c.s);
}

int gate__finish(struct gate *g, struct trace *t, int status)
{
	size_t n = 0;
	struct proc **v;
	int verdict;

	if (!g)
		return status;
	v = trace__procs(t, &n);
	for (size_t i = 0; i < n; i++)
		gate__proc(g, v[i]);
	free(v);
	verdict = leakgate__finish(g->lg, stderr);
	if (trace__stats(t)->shed_kept)
		elog("the gates' numbers are estimates: heapsnoop fell behind and recorded %" PRIu64
		     " allocations as samples for the rest (LOAD SHED above); --on-full hold "
		     "makes them exact", trace__stats(t)->shed_kept);
	if (g->failed) {
		elog("out of memory while gating: the verdict is not trusted");
		return HS_EXIT_ERROR;
	}
	if (status == HS_EXIT_ERROR || status == HS_EXIT_LOST) {
		if (verdict)
			elog("exit status %d, not the gate's %d: %s", status, verdict,
			     status == HS_EXIT_ERROR ? "an error" : "the records are incomplete");
		return status;
	}
	if (verdict && status)
		elog("exit status %d (the gate's); the command's own: %d", verdict, status);
	return verdict ? verdict : status;
}

// SPDX-License-Identifier: MIT
/*
 * report.c - the dump, the exit records and the summary (see report.h;
 * line grammar in docs/OUTPUT.md). A dump repeats the mapping records each
 * time so that any one dump, cut out of a log, can be symbolized on its own.
 * Everything is written process by process, most live bytes first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framefmt.h"
#include "msg.h"
#include "records.h"
#include "report.h"

struct dump_ctx {
	struct stacks *stacks;
	FILE *out;
	int err;
};

static void dump_one(const struct live_alloc *a, void *arg)
{
	struct dump_ctx *d = arg;
	char tok[HS_TOKEN_BUF];
	int n = stacks__token(d->stacks, a->stack, a->size, tok, sizeof(tok));
	const struct stack *s = stacks__get(d->stacks, a->stack);
	struct record r = { .type = REC_LIVE, .pid = (int)a->pid, .ptr = a->addr };

	/* An incomplete stack says so in its record (docs/OUTPUT.md, cut=). */
	if (s->flags & STACK_TRUNCATED)
		r.cut |= REC_CUT_DEPTH;
	if (s->flags & STACK_FAULT)
		r.cut |= REC_CUT_UNREADABLE;
	if (n < 0) {
		r.size = a->size;
		r.error = hs_strerror(n);
		records__write(d->out, &r);
		return;
	}
	r.token = tok;
	r.token_len = (size_t)n;
	if (records__write(d->out, &r))
		d->err = -EIO;
}

static void write_maps(const struct proc *p, FILE *out)
{
	for (size_t k = 0; p->maps && k < p->maps->n; k++) {
		const struct mapping *m = &p->maps->v[k];
		struct record r = { .type = REC_MAP, .pid = p->pid, .start = m->start,
				    .end = m->end, .off = m->offset, .path = m->path };

		snprintf(r.build_id, sizeof(r.build_id), "%s", m->build_id);
		records__write(out, &r);
	}
}

static int write_live(struct proc *p, FILE *out)
{
	struct dump_ctx d = { .stacks = p->stacks, .out = out };

	tracker__for_each(p->live, dump_one, &d);
	return d.err;
}

/* A dump's or an exit's time: the wall clock now. */
static void set_time(struct record *r)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	r->time_s = now.tv_sec;
	r->time_ms = (uint32_t)(now.tv_nsec / 1000000);
}

int report__dump(struct trace *t, FILE *out, const char *reason)
{
	size_t n = 0;
	struct proc **v = trace__procs(t, &n);
	struct record r = { .type = REC_DUMP, .live = trace__live_count(t),
			    .bytes = trace__live_bytes(t), .stacks = trace__stack_count(t) };
	int err = 0;

	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	set_time(&r);
	records__write(out, &r);
	/* Most live bytes first: processes with none come last, unwritten. */
	for (size_t i = 0; i < n && tracker__count(v[i]->live); i++)
		write_maps(v[i], out);
	for (size_t i = 0; i < n && tracker__count(v[i]->live); i++)
		err = err ? err : write_live(v[i], out);
	records__write(out, &(struct record){ .type = REC_END_DUMP, .live = r.live });
	free(v);
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

int report__exit(struct proc *p, FILE *out)
{
	struct record r = { .type = REC_EXIT, .pid = p->pid, .live = tracker__count(p->live),
			    .bytes = tracker__bytes(p->live), .comm = p->comm };
	int err;

	set_time(&r);
	records__write(out, &r);
	write_maps(p, out);
	err = write_live(p, out);
	records__write(out, &(struct record){ .type = REC_END_EXIT, .pid = p->pid,
					      .live = r.live });
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

static void print_frame(const struct proc *p, struct symbolizer *sym, const struct stack *s,
			uint32_t i, FILE *out)
{
	const struct mapping *m = p->maps ? mapset__find(p->maps, s->frames[i]) : NULL;
	struct sym_frame f;
	bool named = sym && !symbolizer__lookup(sym, m, s->frames[i], true, &f);

	framefmt__write(out, "        ", i, s->frames[i], named ? &f : NULL);
}

/* One process's top stacks, @top at most; returns how many it printed. */
static unsigned int summary_proc(const struct proc *p, struct symbolizer *sym, FILE *out,
				 unsigned int top)
{
	size_t k;
	struct stack **v = stacks__by_live_bytes(p->stacks, &k);
	unsigned int shown = 0;

	if (!v)
		return 0;
	for (size_t i = 0; i < k && shown < top; i++, shown++) {
		const struct stack *s = v[i];

		const char *cut = framefmt__cut(s->flags);

		fprintf(out, "    %" PRIu64 " bytes in %" PRIu64 " allocations from pid %u%s%s%s:\n",
			s->live_bytes, s->live_count, s->pid, *cut ? " (" : "", cut, *cut ? ")" : "");
		for (uint32_t f = 0; f < s->depth; f++)
			print_frame(p, sym, s, f, out);
	}
	free(v);
	return shown;
}

void report__summary(struct trace *t, struct symbolizer *sym, FILE *out, unsigned int top)
{
	size_t n = 0, with_live = 0;
	struct proc **v = trace__procs(t, &n);
	unsigned int left = top;

	while (with_live < n && tracker__count(v[with_live]->live))
		with_live++;
	flog(out, "summary: %zu live allocations, %" PRIu64 " bytes, from %zu stacks"
		" in %zu process(es) (top %u stacks by live bytes)", trace__live_count(t),
		trace__live_bytes(t), trace__stack_count(t), with_live, top);
	if (with_live > 1) {
		/* Several processes: who holds what first, then where from. */
		fprintf(out, "  processes by live bytes:\n");
		for (size_t i = 0; i < with_live && i < top; i++)
			fprintf(out, "    pid %d (%s): %" PRIu64 " bytes in %zu allocations, "
				"%zu stacks\n", v[i]->pid, v[i]->comm[0] ? v[i]->comm : "?",
				tracker__bytes(v[i]->live), tracker__count(v[i]->live),
				stacks__count(v[i]->stacks));
	}
	/* Each process's share of the top stacks, largest processes first. */
	for (size_t i = 0; i < with_live && left; i++) {
		if (with_live > 1)
			fprintf(out, "  pid %d (%s):\n", v[i]->pid, v[i]->comm[0] ? v[i]->comm : "?");
		left -= summary_proc(v[i], sym, out, with_live > 1 && left > 3 ? 3 : left);
	}
	free(v);
	fflush(out);
}

// SPDX-License-Identifier: MIT
/*
 * report.c - the dump, the exit records and the summary (see report.h;
 * line grammar in docs/OUTPUT.md). A dump repeats the mapping records each
 * time so that any one dump, cut out of a log, can be symbolized on its own.
 * Everything is written process by process, most live bytes first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framefmt.h"
#include "frametab.h"
#include "msg.h"
#include "records.h"
#include "report.h"

struct dump_ctx {
	struct stacks *stacks;
	int pid;
	FILE *out;
	int err;
};

static void dump_one(const struct live_alloc *a, void *arg)
{
	struct dump_ctx *d = arg;
	static char tok[REC_TOKENS_BUF];
	struct record r = { .type = REC_LIVE, .pid = d->pid, .ptr = a->addr };
	/* Its tokens (deeper than one: depth=), and cut= if incomplete (docs/OUTPUT.md). */
	int n = stacks__record(d->stacks, a->stack, a->size, &r, tok, sizeof(tok));

	if (n < 0) {
		r.size = a->size;
		r.error = hs_strerror(n);
		records__write(d->out, &r);
		return;
	}
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

/*
 * The frames that are not native code (frametab.h) of @p's stacks this
 * dump writes: those with live allocations, and with @acct those whose
 * whole-run record is written (write_acct's choice).
 */
static void need_frames(struct frametab *ft, struct proc *p, bool acct)
{
	for (uint32_t id = 0; id < stacks__count(p->stacks); id++) {
		const struct stack *s = stacks__get(p->stacks, id);
		const struct acct_stack *m;
		uint64_t pc, pb;

		if (!s->live_count && acct) {
			m = acct__stack(&p->acct, id);
			if (!m)
				continue;	/* nothing was ever charged to it */
			acct__at_peak(&p->acct, s, id, &pc, &pb);
			if (!m->dirty && pc == m->written_peak_count && pb == m->written_peak_bytes)
				continue;
		} else if (!s->live_count) {
			continue;
		}
		frametab__need(ft, (uint32_t)p->pid, s->frames, s->depth);
	}
}

static int write_live(struct proc *p, FILE *out)
{
	struct dump_ctx d = { .stacks = p->stacks, .pid = p->pid, .out = out };

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

/* The wall-clock time of CLOCK_MONOTONIC @ns, in seconds and ms. */
static void wall_of(uint64_t ns, int64_t *sec, uint32_t *ms)
{
	struct timespec mono, real;
	int64_t wall_ms;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	wall_ms = (int64_t)real.tv_sec * 1000 + real.tv_nsec / 1000000 -
		  ((int64_t)mono.tv_sec * 1000 + mono.tv_nsec / 1000000 - (int64_t)(ns / 1000000));
	*sec = wall_ms / 1000;
	*ms = (uint32_t)(wall_ms % 1000);
}

/* Has @p whole-run counts the last dump did not write? */
static bool acct_changed(const struct proc *p)
{
	return p->allocated && p->acct.dirty;
}

/*
 * @p's `proc` record, then a `stack` record for each stack whose counts
 * or at-peak values changed since last written (all, the first time):
 * a log of -i dumps over days stays proportional to what changes.
 * @out NULL: only mark them written (another process wrote them).
 */
static int write_acct(struct proc *p, FILE *out)
{
	const struct acct *a = &p->acct;
	struct record r = { .type = REC_PROC, .pid = p->pid, .peak = a->peak_bytes,
			    .peak_count = a->peak_count, .allocs = a->allocs,
			    .allocated = a->alloc_bytes, .frees = a->frees,
			    .temporary = a->temporary, .live = tracker__count(p->live),
			    .bytes = p->live_estimate, .comm = p->comm[0] ? p->comm : "?" };
	static char tok[REC_TOKENS_BUF];
	int err = 0;

	wall_of(a->peak_ns, &r.peak_time_s, &r.peak_time_ms);
	if (out && records__write(out, &r))
		err = -EIO;
	for (uint32_t id = 0; id < stacks__count(p->stacks); id++) {
		struct stack *s = stacks__get(p->stacks, id);
		struct acct_stack *m = acct__stack(a, id);
		uint64_t pc, pb;
		int n;

		if (!m)
			continue;	/* nothing was ever charged to it */
		acct__at_peak(a, s, id, &pc, &pb);
		if (!m->dirty && pc == m->written_peak_count && pb == m->written_peak_bytes)
			continue;
		if (!out)
			goto written;
		/*
		 * Size 0: a tool that adds up the sizes of every `~m#` token
		 * of a log still adds up live blocks only.
		 */
		r = (struct record){ .type = REC_STACK, .pid = p->pid, .allocs = s->allocs,
				     .allocated = s->alloc_bytes, .frees = s->frees,
				     .temporary = s->temporary, .live = s->live_count,
				     .bytes = s->live_bytes, .peak = pb, .peak_count = pc };
		n = stacks__record(p->stacks, id, 0, &r, tok, sizeof(tok));
		if (n < 0)
			continue;
		if (records__write(out, &r))
			err = -EIO;
written:
		m->dirty = false;
		m->written_peak_count = pc;
		m->written_peak_bytes = pb;
	}
	p->acct.dirty = false;
	return err;
}

int report__samples(struct trace *t, FILE *out)
{
	size_t n = 0;
	struct proc **v = trace__procs(t, &n);
	struct record r = { .type = REC_SAMPLE };
	int err = 0;

	set_time(&r);
	for (size_t i = 0; i < n; i++) {
		struct acct *a = &v[i]->acct;

		r.pid = v[i]->pid;
		r.live = tracker__count(v[i]->live);
		r.bytes = v[i]->live_estimate;
		if (!v[i]->allocated || (r.live == a->sample_count && r.bytes == a->sample_bytes))
			continue;
		if (records__write(out, &r))
			err = -EIO;
		a->sample_count = r.live;
		a->sample_bytes = r.bytes;
	}
	free(v);
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

int report__dump(struct trace *t, FILE *out, const char *reason)
{
	size_t n = 0;
	struct proc **v = trace__procs(t, &n);
	struct record r = { .type = REC_DUMP, .live = trace__live_count(t),
			    .bytes = trace__live_bytes(t), .stacks = trace__stack_count(t),
			    .sample_bytes = trace__sample_bytes(t) };
	int err = 0;

	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	set_time(&r);
	records__write(out, &r);
	/*
	 * Most live bytes first. Mappings for every process with records in
	 * this dump: live allocations, or whole-run counts that changed.
	 */
	for (size_t i = 0; i < n; i++)
		if (tracker__count(v[i]->live) || acct_changed(v[i]))
			write_maps(v[i], out);
	/* Then the frames that are not native code its stacks name. */
	trace__retry_jit(t, NULL);
	frametab__dump_begin(trace__frames(t));
	for (size_t i = 0; i < n; i++) {
		if (!tracker__count(v[i]->live) && !acct_changed(v[i]))
			continue;
		need_frames(trace__frames(t), v[i], acct_changed(v[i]));
		if (frametab__write(trace__frames(t), (uint32_t)v[i]->pid, out))
			err = -EIO;
	}
	for (size_t i = 0; i < n && tracker__count(v[i]->live); i++)
		err = err ? err : write_live(v[i], out);
	for (size_t i = 0; i < n; i++)
		if (acct_changed(v[i]) && write_acct(v[i], out))
			err = err ? err : -EIO;
	records__write(out, &(struct record){ .type = REC_END_DUMP, .live = r.live });
	free(v);
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

void report__dump_written(struct trace *t)
{
	size_t n = 0;
	struct proc **v = trace__procs(t, &n);

	for (size_t i = 0; v && i < n; i++)
		if (acct_changed(v[i]))
			write_acct(v[i], NULL);
	free(v);
}

int report__exit(struct trace *t, struct proc *p, FILE *out)
{
	struct record r = { .type = REC_EXIT, .pid = p->pid, .live = tracker__count(p->live),
			    .bytes = p->live_estimate, .comm = p->comm };
	int err;

	set_time(&r);
	records__write(out, &r);
	write_maps(p, out);
	trace__retry_jit(t, p);
	frametab__dump_begin(trace__frames(t));
	need_frames(trace__frames(t), p, acct_changed(p));
	err = frametab__write(trace__frames(t), (uint32_t)p->pid, out) ? -EIO : 0;
	err = write_live(p, out) ? -EIO : err;
	if (acct_changed(p) && write_acct(p, out))
		err = err ? err : -EIO;
	records__write(out, &(struct record){ .type = REC_END_EXIT, .pid = p->pid,
					      .live = r.live });
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

static void print_frame(struct frametab *ft, const struct proc *p, struct symbolizer *sym,
			const struct stack *s, uint32_t i, FILE *out)
{
	const struct mapping *m = p->maps ? mapset__find(p->maps, s->frames[i]) : NULL;
	struct sym_frame f;
	/*
	 * A frame that is not native code (an interpreter's, or JIT code its
	 * perf map named) is named by its table, the others by their file.
	 */
	bool named = frametab__symbolize(ft, (uint32_t)p->pid, s->frames[i], &f) ||
		     (sym && !symbolizer__lookup(sym, m, s->frames[i], true, &f));

	framefmt__write(out, "        ", i, s->frames[i], named ? &f : NULL);
}

/* One process's top stacks, @top at most; returns how many it printed. */
static unsigned int summary_proc(struct frametab *ft, const struct proc *p,
				 struct symbolizer *sym, FILE *out, unsigned int top)
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
			print_frame(ft, p, sym, s, f, out);
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
				v[i]->live_estimate, tracker__count(v[i]->live),
				stacks__count(v[i]->stacks));
	}
	/* Each process's share of the top stacks, largest processes first. */
	for (size_t i = 0; i < with_live && left; i++) {
		if (with_live > 1)
			fprintf(out, "  pid %d (%s):\n", v[i]->pid, v[i]->comm[0] ? v[i]->comm : "?");
		left -= summary_proc(trace__frames(t), v[i], sym, out,
				     with_live > 1 && left > 3 ? 3 : left);
	}
	free(v);
	fflush(out);
}

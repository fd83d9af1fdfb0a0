// SPDX-License-Identifier: MIT
/*
 * report.c - the dump, the exit records and the summary (see report.h;
 * line grammar in docs/OUTPUT.md). A dump repeats the mapping records each
 * time, and each process's stacks as a tree (treelog.c), so that any one
 * dump, cut out of a log, can be read and symbolized on its own. Everything
 * is written process by process, most live bytes first; a process's live
 * records stack by stack in its tree's order, each stack's by address.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framefmt.h"
#include "frametab.h"
#include "holders.h"
#include "msg.h"
#include "records.h"
#include "report.h"
#include "rtsummary.h"
#include "stackview.h"
#include "text.h"
#include "treelog.h"

/* One process's part of a dump: the tree of the stacks its records name. */
struct part {
	struct proc *p;
	struct tree_log *tl;
	bool acct;	/* its whole-run records are in the dump */
};

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

static void need_live(const struct live_alloc *a, void *ctx)
{
	tree_log__need(ctx, a->stack);
}

static int need_changed(void *ctx, uint32_t id)
{
	const struct part *pt = ctx;

	if (acct__changed(&pt->p->acct, id))
		tree_log__need(pt->tl, id);
	return 0;
}

/*
 * @p's part: the stacks its records name (those with live allocations,
 * and with @acct those whose whole-run record is written: acct's
 * choice), their tree numbered, the frames in it that are not native
 * code marked in @ft. 0 or -ENOMEM.
 */
static int part_begin(struct part *pt, struct proc *p, bool acct, struct frametab *ft)
{
	pt->p = p;
	pt->acct = acct;
	pt->tl = tree_log__new(p->stacks);
	if (!pt->tl)
		return -ENOMEM;
	tracker__for_each(p->live, need_live, pt->tl);
	if (acct && stack_tree__for_each(p->stacks, false, need_changed, pt))
		return -ENOMEM;
	return tree_log__build(pt->tl, ft, (uint32_t)p->pid);
}

/*
 * A stack's part of a `live` or `stack` record @r: its node in the dump's
 * tree (node=^ if it is the one just written, @last) and its cut=; a
 * stack of no frames, which has no node, as a token of no frames into
 * @tok (REC_TOKENS_BUF). Returns 0, or a negative hs_err for a size a
 * token cannot hold (r->token NULL then).
 */
static int stack_part(const struct part *pt, uint32_t id, uint32_t node, bool last,
		      uint64_t size, struct record *r, char *tok)
{
	int n;

	r->cut = stack_tree__flags(pt->p->stacks, id);
	if (node != TREE_LOG_NONE) {
		r->has_node = true;
		r->node = last ? REC_NODE_PREV : node;
		r->size = size;
		return 0;
	}
	n = records__tokens(&size, 0, size, tok, REC_TOKENS_BUF);	/* no frame read */
	r->token = n < 0 ? NULL : tok;
	r->token_len = n < 0 ? 0 : (size_t)n;
	return n < 0 ? n : 0;
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
 * A live block as the dump sorts them: by its stack, then by address;
 * its size with its shed level (live_alloc's) in the top byte.
 */
struct blk {
	uint64_t addr, size;
};
#define BLK_SHED_SHIFT	56

/* A process's records by stack, as its tree's walk writes them. */
struct stack_ctx {
	const struct part *pt;
	FILE *out;
	bool mark;		/* note the `stack` records as written (acct.h) */
	uint32_t *start;	/* each stack's blocks: by tree_log__index, from start[] */
	struct blk *v;
	bool place;
	int err;
};

static void count_live(const struct live_alloc *a, void *ctx)
{
	struct stack_ctx *c = ctx;
	uint32_t k = tree_log__index(c->pt->tl, a->stack);

	if (c->place)
		c->v[c->start[k]++] = (struct blk){ a->addr, (uint64_t)a->size |
							       (uint64_t)a->shed << BLK_SHED_SHIFT };
	else
		c->start[k + 2]++;
}

static int by_addr(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * @c's blocks by stack (a counting sort on the stacks' indexes), each
 * stack's by address: in the records of the dump, a stack's blocks one
 * after another, what compresses (neighbours share their numbers'
 * digits). 0 or -ENOMEM.
 */
static int sort_live(struct stack_ctx *c)
{
	size_t n = tracker__count(c->pt->p->live), k = tree_log__marked(c->pt->tl);

	c->start = calloc(k + 2, sizeof(*c->start));
	c->v = malloc((n ? n : 1) * sizeof(*c->v));
	if (!c->start || !c->v)
		return -ENOMEM;
	tracker__for_each(c->pt->p->live, count_live, c);
	for (size_t i = 2; i < k + 2; i++)
		c->start[i] += c->start[i - 1];
	/* start[i + 1]: where stack i's go, then (placed) where stack i + 1's start. */
	c->place = true;
	c->start++;
	tracker__for_each(c->pt->p->live, count_live, c);
	c->start--;
	for (size_t i = 0; i < k; i++)
		if (c->start[i + 1] - c->start[i] > 1)
			qsort(c->v + c->start[i], c->start[i + 1] - c->start[i], sizeof(*c->v),
			      by_addr);
	return 0;
}

/*
 * Stack @id's records, after its node @node (the one just written if
 * @last: node=^, which costs a compressed log nothing): its `live`
 * records, then its `stack` record if its whole-run values changed
 * (noted written with c->mark).
 */
static int write_stack(void *ctx, uint32_t id, uint32_t node, bool last)
{
	struct stack_ctx *c = ctx;
	struct proc *p = c->pt->p;
	static char tok[REC_TOKENS_BUF];
	uint32_t k = tree_log__index(c->pt->tl, id);
	struct acct_counts v;
	struct record r;


	for (uint32_t i = c->start[k]; i < c->start[k + 1]; i++) {
		uint64_t size = c->v[i].size & LIVE_SIZE_MAX;

		r = (struct record){ .type = REC_LIVE, .pid = p->pid, .ptr = c->v[i].addr,
				     .shed = hs_shed_mean((uint32_t)(c->v[i].size >>
								    BLK_SHED_SHIFT)) };
		if (stack_part(c->pt, id, node, last, size, &r, tok)) {
			/* Only a size >= 2^63 has no token; said, never guessed. */
			r.size = size;
			r.error = hs_strerror(-HS_ERANGE);
		}
		if (records__write(c->out, &r))
			c->err = -EIO;
	}
	if (!c->pt->acct || !acct__changed(&p->acct, id))
		return 0;
	acct__counts(&p->acct, id, &v);
	/*
	 * Size 0 (the form with tokens): a tool that adds up the sizes of
	 * every `~m#` token of a log still adds up live blocks only.
	 */
	r = (struct record){ .type = REC_STACK, .pid = p->pid, .allocs = v.allocs,
			     .allocated = v.alloc_bytes, .frees = v.frees,
			     .temporary = v.temporary, .live = v.live_count,
			     .bytes = v.live_bytes, .peak = v.peak_bytes,
			     .peak_count = v.peak_count };
	if (!stack_part(c->pt, id, node, last, 0, &r, tok) && records__write(c->out, &r))
		c->err = -EIO;
	if (c->mark)
		acct__written(&p->acct, id);
	return 0;
}

/* @p's `proc` record. */
static int write_proc(const struct proc *p, FILE *out)
{
	const struct acct *a = &p->acct;
	struct record r = { .type = REC_PROC, .pid = p->pid, .peak = a->peak_bytes,
			    .peak_count = a->peak_count, .allocs = a->allocs,
			    .allocated = a->alloc_bytes, .frees = a->frees,
			    .temporary = a->temporary, .live = tracker__count(p->live),
			    .bytes = p->live_estimate, .shed = p->shed_kept,
			    .comm = p->comm[0] ? p->comm : "?" };

	wall_of(a->peak_ns, &r.peak_time_s, &r.peak_time_ms);
	return records__write(out, &r) ? -EIO : 0;
}

/*
 * @pt's tree and, after each node, the records of the stack it ends:
 * its live blocks and, with @pt->acct, its whole-run values if they
 * changed since last written (all, the first time: a log of -i dumps
 * over days stays proportional to what changes); then its `proc` record.
 * With @mark, noted as written (acct.h). 0, -EIO or -ENOMEM.
 */
static int write_part(const struct part *pt, FILE *out, bool mark)
{
	struct stack_ctx c = { .pt = pt, .out = out, .mark = mark };
	int err = sort_live(&c);

	if (!err)
		err = tree_log__write(pt->tl, (uint32_t)pt->p->pid, out, write_stack, &c);
	err = err ? err : c.err;
	if (!err && pt->acct) {
		err = write_proc(pt->p, out);
		if (mark)
			acct__all_written(&pt->p->acct);
	}
	free(c.start);
	free(c.v);
	return err;
}

static int mark_changed(void *ctx, uint32_t id)
{
	struct acct *a = ctx;

	if (acct__changed(a, id))
		acct__written(a, id);
	return 0;
}

/*
 * What the dump's records of @p would mark written, marked (bgdump's
 * parent); out of memory, nothing (the stacks written again next time).
 */
static void mark_acct(struct proc *p)
{
	if (!stack_tree__for_each(p->stacks, false, mark_changed, &p->acct))
		acct__all_written(&p->acct);
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

/*
 * The parts of @n processes @v from their frames on: each's frame and
 * jit records, then each's tree with its records (write_part(), marked
 * written with @mark). 0, -EIO or -ENOMEM.
 */
static int write_parts(struct trace *t, struct part *pts, size_t n, FILE *out, bool mark)
{
	struct frametab *ft = trace__frames(t);
	int err = 0;

	frametab__dump_begin(ft);
	for (size_t i = 0; i < n && !err; i++) {
		err = part_begin(&pts[i], pts[i].p, pts[i].acct, ft);
		if (!err && frametab__write(ft, (uint32_t)pts[i].p->pid, out))
			err = -EIO;
	}
	for (size_t i = 0; i < n && !err; i++)
		err = write_part(&pts[i], out, mark);
	for (size_t i = 0; i < n; i++)
		tree_log__free(pts[i].tl);
	return err;
}

static int dump(struct trace *t, FILE *out, const char *reason, bool mark)
{
	size_t n = 0, k = 0;
	struct proc **v = trace__procs(t, &n);
	struct part *pts = calloc(n ? n : 1, sizeof(*pts));
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
	for (size_t i = 0; i < n; i++) {
		if (!tracker__count(v[i]->live) && !acct_changed(v[i]))
			continue;
		write_maps(v[i], out);
		if (pts)
			pts[k++] = (struct part){ .p = v[i], .acct = acct_changed(v[i]) };
	}
	trace__retry_jit(t, NULL);
	err = pts ? write_parts(t, pts, k, out, mark) : -ENOMEM;
	if (err == -ENOMEM)
		elog("out of memory writing the dump: its records are incomplete (no end-dump)");
	/* A dump that is not whole has no end-dump: readers tell it apart. */
	if (!err)
		records__write(out, &(struct record){ .type = REC_END_DUMP, .live = r.live });
	free(pts);
	free(v);
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

int report__dump(struct trace *t, FILE *out, const char *reason)
{
	return dump(t, out, reason, true);
}

int report__dump_copy(struct trace *t, FILE *out, const char *reason)
{
	return dump(t, out, reason, false);
}

void report__dump_written(struct trace *t)
{
	size_t n = 0;
	struct proc **v = trace__procs(t, &n);

	for (size_t i = 0; v && i < n; i++)
		if (acct_changed(v[i]))
			mark_acct(v[i]);
	free(v);
}

int report__exit(struct trace *t, struct proc *p, FILE *out)
{
	struct record r = { .type = REC_EXIT, .pid = p->pid, .live = tracker__count(p->live),
			    .bytes = p->live_estimate, .comm = p->comm };
	struct part pt = { .p = p, .acct = acct_changed(p) };
	int err;

	set_time(&r);
	records__write(out, &r);
	write_maps(p, out);
	trace__retry_jit(t, p);
	err = write_parts(t, &pt, 1, out, true);
	if (err == -ENOMEM)
		elog("out of memory writing the exit section of pid %d: its records are "
		     "incomplete (no end-exit)", p->pid);
	if (!err)
		records__write(out, &(struct record){ .type = REC_END_EXIT, .pid = p->pid,
						      .live = r.live });
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

/* What naming a frame of one process takes (holders.h's lookup). */
struct namer {
	struct frametab *ft;
	const struct proc *p;
	struct symbolizer *sym;
};

static bool name_frame(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	const struct namer *nm = ctx;
	const struct mapping *m = nm->p->maps ? mapset__find(nm->p->maps, addr) : NULL;

	/*
	 * A frame that is not native code (an interpreter's, or JIT code its
	 * perf map named) is named by its table, the others by their file.
	 */
	return frametab__symbolize(nm->ft, pid, addr, f) ||
	       (nm->sym && !symbolizer__lookup(nm->sym, m, addr, true, f));
}

/* A stack among the top ones: its live values and its id. */
struct top {
	uint64_t bytes, count;
	uint32_t id;
};

/* Does @a come before @b: more live bytes, then more allocations? */
static bool before(const struct top *a, const struct top *b)
{
	return a->bytes != b->bytes ? a->bytes > b->bytes : a->count > b->count;
}

/* The @top stacks of a process with live blocks, kept in order as they go by. */
struct tops {
	const struct acct *a;
	struct top *v;
	unsigned int k, top;
	const struct rt_summary *rt;	/* the C runtime's stacks, left out */
	size_t rt_i;			/* the process's index in it */
};

static int keep_top(void *ctx, uint32_t id)
{
	struct tops *t = ctx;
	struct acct_counts c;
	struct top e;
	unsigned int j;

	acct__counts(t->a, id, &c);
	e = (struct top){ c.live_bytes, c.live_count, id };
	if (!c.live_count || (t->k == t->top && !before(&e, &t->v[t->top - 1])) ||
	    rt_summary__has(t->rt, t->rt_i, id))
		return 0;
	j = t->k < t->top ? t->k++ : t->top - 1;
	for (; j && before(&e, &t->v[j - 1]); j--)
		t->v[j] = t->v[j - 1];
	t->v[j] = e;
	return 0;
}

/* One process's top stacks, @top at most; returns how many it printed. */
static unsigned int summary_proc(struct namer *nm, const struct proc *p, FILE *out,
				 unsigned int top, const struct rt_summary *rt, size_t rt_i, bool full)
{
	struct tops t = { &p->acct, calloc(top ? top : 1, sizeof(*t.v)), 0, top, rt, rt_i };
	uint64_t *frames = malloc(REC_MAX_DEPTH * sizeof(*frames));
	struct top *v = t.v;
	unsigned int k;

	if (!v || !frames || !top || stack_tree__for_each(p->stacks, false, keep_top, &t))
		t.k = 0;
	k = t.k;
	for (unsigned int i = 0; frames && i < k; i++) {
		uint32_t depth = stack_tree__frames(p->stacks, v[i].id, frames);
		const char *cut = framefmt__cut(stack_tree__flags(p->stacks, v[i].id));

		char size[32];

		fprintf(out, "    %s in %" PRIu64 " allocations from pid %d%s%s%s:\n",
			text_size(v[i].bytes, false, size), v[i].count, p->pid, *cut ? " (" : "",
			cut, *cut ? ")" : "");
		nm->p = p;
		stackview__write(out, "        ", (uint32_t)p->pid, frames, depth, full, name_frame,
				 nm);
	}
	free(frames);
	free(v);
	return k;
}

/* What holders__add needs of the live stacks of one process. */
struct holding {
	struct holders *h;
	const struct proc *p;
	uint64_t *frames;
	const struct rt_summary *rt;	/* the C runtime's stacks, left out */
	size_t rt_i;			/* the process's index in it */
	int err;
};

static int add_holder(void *ctx, uint32_t id)
{
	struct holding *hd = ctx;
	const struct proc *p = hd->p;
	struct acct_counts c;
	uint32_t depth;

	acct__counts(&p->acct, id, &c);
	if (!c.live_count || rt_summary__has(hd->rt, hd->rt_i, id))
		return 0;
	depth = stack_tree__frames(p->stacks, id, hd->frames);
	if (holders__add(hd->h, (uint32_t)p->pid, hd->frames, depth, c.live_bytes, c.live_count,
			 *framefmt__cut(stack_tree__flags(p->stacks, id)) ? c.live_count : 0))
		hd->err = -ENOMEM;
	return hd->err;
}

/*
 * The headline, the answer first: the biggest holder over @n processes
 * @v (holders.h), the C runtime's stacks in @rt left out, or that
 * nothing is live.
 */
static void headline(struct namer *nm, struct proc **v, size_t n, const struct rt_summary *rt,
		     FILE *out)
{
	struct holders *h = holders__new(name_frame, nm, false);
	struct holding hd = { h, NULL, malloc(REC_MAX_DEPTH * sizeof(uint64_t)), rt, 0, 0 };
	char line[1024];

	for (size_t i = 0; h && hd.frames && !hd.err && i < n; i++) {
		if (!tracker__count(v[i]->live))
			continue;
		hd.p = nm->p = v[i];
		hd.rt_i = i;
		stack_tree__for_each(v[i]->stacks, false, add_holder, &hd);
	}
	if (!h || !hd.frames || hd.err)
		elog("out of memory naming the biggest holder");
	else if (holders__headline(h, "biggest holder", line, sizeof(line)))
		flog(out, "%s", line);
	else
		flog(out, "biggest holder: none, nothing is live");
	holders__free(h);
	free(hd.frames);
}

void report__summary(struct trace *t, struct symbolizer *sym, FILE *out, unsigned int top,
		     const struct summary_opts *so)
{
	size_t n = 0, with_live = 0;
	struct proc **v = trace__procs(t, &n);
	struct namer nm = { trace__frames(t), NULL, sym };
	unsigned int left = top;
	struct rt_summary *rt;
	char size[32];

	while (with_live < n && tracker__count(v[with_live]->live))
		with_live++;
	rt = rt_summary__new(trace__frames(t), v, with_live, sym, so);
	headline(&nm, v, with_live, rt, out);
	flog(out, "summary: %zu live allocations, %s, from %zu stacks"
		" in %zu process(es) (top %u stacks by live bytes)", trace__live_count(t),
		text_size(trace__live_bytes(t), false, size), trace__stack_count(t), with_live, top);
	if (with_live > 1) {
		/* Several processes: who holds what first, then where from. */
		fprintf(out, "  processes by live bytes:\n");
		for (size_t i = 0; i < with_live && i < top; i++)
			fprintf(out, "    pid %d (%s): %s in %zu allocations, "
				"%zu stacks\n", v[i]->pid, v[i]->comm[0] ? v[i]->comm : "?",
				text_size(v[i]->live_estimate, false, size), tracker__count(v[i]->live),
				stack_tree__count(v[i]->stacks));
	}
	/* Each process's share of the top stacks, largest processes first. */
	for (size_t i = 0; i < with_live && left; i++) {
		if (with_live > 1)
			fprintf(out, "  pid %d (%s):\n", v[i]->pid, v[i]->comm[0] ? v[i]->comm : "?");
		left -= summary_proc(&nm, v[i], out, with_live > 1 && left > 3 ? 3 : left, rt, i,
				     so->full_stacks);
	}
	rt_summary__write(rt, v, n, so, out);
	rt_summary__free(rt);
	free(v);
	fflush(out);
}

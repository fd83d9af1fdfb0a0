// SPDX-License-Identifier: MIT
/*
 * dump.c - the dump, the exit records and the summary (see dump.h;
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
#include "msg.h"
#include "records.h"
#include "dump.h"
#include "summary.h"
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
	struct record r, us;

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
		/* --keep-stacks: its registers and stack bytes just before it. */
		if (kept_stacks__record(p->kept, p->pid, c->v[i].addr, &us) &&
		    records__write(c->out, &us))
			c->err = -EIO;
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

/* Frames that are not native code (an interpreter's, JIT code): named by the trace's table. */
static bool name_frame(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	return frametab__symbolize(ctx, pid, addr, f);
}

/* What summary.h needs of one process's live stacks. */
struct copy_ctx {
	const struct proc *p;
	struct sum_proc *sp;
	uint64_t *frames;
};

static int copy_stack(void *ctx, uint32_t id)
{
	struct copy_ctx *c = ctx;
	struct acct_counts v;
	uint32_t depth;

	acct__counts(&c->p->acct, id, &v);
	if (!v.live_count)
		return 0;
	depth = stack_tree__frames(c->p->stacks, id, c->frames);
	return sum_proc__stack_ref(c->sp, id, depth, stack_tree__flags(c->p->stacks, id),
				   v.live_bytes, v.live_count);
}

/* summary.h's source: a stack of the tree, read when the summary needs it. */
static uint32_t tree_frames(void *ctx, uint64_t ref, uint64_t *out)
{
	return stack_tree__frames(ctx, (uint32_t)ref, out);
}

/*
 * @p into @s: its values, and its stacks with live blocks by their ids
 * in its tree (read again as the summary writes them: the tree is held
 * until then). 0 or -ENOMEM.
 */
static int summary_of(struct summary *s, const struct proc *p, uint64_t now_ns, uint64_t *frames)
{
	struct sum_proc *sp = summary__proc(s, p->pid, p->comm);
	struct copy_ctx c = { p, sp, frames };

	if (!sp)
		return -ENOMEM;
	sum_proc__maps(sp, p->maps);
	sum_proc__source(sp, tree_frames, p->stacks);
	sp->live_bytes = p->live_estimate;
	sp->live_count = tracker__count(p->live);
	sp->stacks = stack_tree__count(p->stacks);
	sp->allocated = p->allocated;
	sp->peak = p->acct.peak_bytes;
	sp->peak_count = p->acct.peak_count;
	if (p->acct.peak_ns && now_ns > p->acct.peak_ns)
		sp->peak_ago_ms = (int64_t)((now_ns - p->acct.peak_ns) / 1000000);
	if (!sp->live_count)
		return 0;
	return stack_tree__for_each(p->stacks, false, copy_stack, &c) ? -ENOMEM : 0;
}

void report__summary(struct trace *t, struct symbolizer *sym, FILE *out, unsigned int top,
		     const struct summary_opts *so)
{
	size_t n = 0;
	struct proc **v = trace__procs(t, &n);
	struct summary *s = summary__new();
	uint64_t *frames = malloc(REC_MAX_DEPTH * sizeof(*frames));
	struct timespec now;
	int err = s && frames ? 0 : -ENOMEM;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < n && !err; i++)
		err = summary_of(s, v[i], (uint64_t)now.tv_sec * 1000000000 +
				 (uint64_t)now.tv_nsec, frames);
	if (err)
		elog("out of memory writing the summary");
	else
		summary__write(s, sym, name_frame, trace__frames(t), top, so, out);
	summary__free(s);
	free(frames);
	free(v);
}

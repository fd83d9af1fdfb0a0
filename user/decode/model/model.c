// SPDX-License-Identifier: MIT
/*
 * model.c - heapdecode's model of a log (see model.h). The live records
 * of the dump asked for are interned by (pid, stack) in the same
 * unique-stack table heapsnoop uses (stacks.c), their count and bytes
 * summed there (livecount.c); each dump header starts the set again.
 * An exit section's lines (heapsnoop -a --leaks-at-exit: the leaks of a
 * process that ended) belong to every later live set, so they are kept
 * and taken again after each dump header. The `frame` and `jit` records
 * of every dump up to the one described are kept (frametab.h): a
 * whole-run stack written in an earlier dump is named by them. A dump's
 * `tree` and `node` records (nodetab.h) give the stacks its records name
 * by node=, each turned into its frames as it is read.
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "framefmt.h"
#include "frametab.h"
#include "heapsnoop/codec.h"
#include "htab.h"
#include "input/logread.h"
#include "input/nodetab.h"
#include "input/ustacks.h"
#include "model/frameview.h"
#include "model/join.h"
#include "model/livecount.h"
#include "model/maptree.h"
#include "model/model.h"
#include "records.h"
#include "text.h"

struct hd_model {
	struct hd_model_opts opts;
	struct symbolizer *sym;
	struct stacks *stacks;	/* the live set's (pid, stack)s */
	struct htab *maps;	/* pid -> struct maptree, from `map` records */
	uint64_t total_bytes, total_count;
	struct livecount lc;	/* the sums, scaled if the dump is sampled */
	char **exit_lines;	/* the lines of the exit sections so far */
	size_t nexit;
	bool in_exit, replaying;
	struct hd_model *base;	/* --base: subtracted (hd_model__subtract) */
	unsigned int ndumps;	/* dump headers taken in */
	bool done;		/* past the dump --dump names: ignore the rest */
	bool open_dump;		/* the last dump header had no end-dump yet */
	bool following;		/* -s: hd_model__follow(), no live block taken */
	uint64_t records;	/* record lines and tokens seen, of any kind */
	struct runstats *rs;	/* the whole run */
	struct join *join;	/* both, made when first asked for */
	struct stacks *view;	/* --frames: the live set's view, the same */
	struct frametab *frames;	/* `frame` and `jit` records, every dump's */
	struct nodetab *nodes;	/* the dump's trees of stacks */
	uint64_t *fbuf;		/* a record's stack, decoded (REC_MAX_DEPTH) */
	int kept_err;		/* a line's record kept cut: its positive hs_err */
	/* `ustack` records unwound again here (ustacks.h); NULL: --no-unwind-offline */
	struct hd_ustacks *us;
};

struct hd_model *hd_model__new(const struct hd_model_opts *opts, struct symbolizer *sym)
{
	struct hd_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->opts = *opts;
	m->sym = sym;
	m->stacks = stacks__new();
	m->rs = runstats__new();
	m->frames = frametab__new();
	m->nodes = nodetab__new();
	m->fbuf = malloc(REC_MAX_DEPTH * sizeof(*m->fbuf));
	if (!opts->no_offline)
		m->us = hd_ustacks__new(sym);
	if (!m->stacks || !m->rs || !m->frames || !m->nodes || !m->fbuf ||
	    (!opts->no_offline && !m->us)) {
		hd_ustacks__free(m->us);
		stacks__free(m->stacks);
		runstats__free(m->rs);
		frametab__free(m->frames);
		nodetab__free(m->nodes);
		free(m->fbuf);
		free(m);
		return NULL;
	}
	return m;
}

/* The join holds the stacks it was made of: made again when next asked for. */
static void forget_join(struct hd_model *m)
{
	join__free(m->join);
	m->join = NULL;
	stacks__free(m->view);
	m->view = NULL;
}

/* A new live set: no mappings, no stacks. */
static void reset(struct hd_model *m)
{
	struct maptree *pm;
	size_t pos = 0;

	while (m->maps && (pm = htab__next(m->maps, &pos, NULL)))
		maptree__free(pm);
	htab__free(m->maps);
	m->maps = NULL;
	stacks__free(m->stacks);
	m->stacks = stacks__new();
	m->total_bytes = m->total_count = 0;
	if (m->us)
		hd_ustacks__reset(m->us);
}

void hd_model__free(struct hd_model *m)
{
	if (!m)
		return;
	reset(m);
	forget_join(m);
	livecount__reset(&m->lc, 0);
	for (size_t i = 0; i < m->nexit; i++)
		free(m->exit_lines[i]);
	free(m->exit_lines);
	stacks__free(m->stacks);
	runstats__free(m->rs);
	frametab__free(m->frames);
	nodetab__free(m->nodes);
	hd_ustacks__free(m->us);
	free(m->fbuf);
	free(m);
}

/* @pid's mappings (one hash lookup a frame), made if @create; NULL. */
static struct maptree *maps_of(struct hd_model *m, pid_t pid, bool create)
{
	uint64_t h = htab_hash2((uint32_t)pid, 0);
	struct maptree *pm = m->maps ? htab__find(m->maps, h, (uint32_t)pid) : NULL;

	if (pm || !create)
		return pm;
	if (!m->maps)
		m->maps = htab__new(64, NULL, NULL);
	pm = m->maps ? maptree__new() : NULL;
	if (pm && htab__add(m->maps, h, (uint32_t)pid, pm)) {
		maptree__free(pm);
		pm = NULL;
	}
	return pm;
}

static int save_exit_line(struct hd_model *m, const char *line)
{
	char **v, *copy;

	if (m->replaying)
		return 0;
	v = realloc(m->exit_lines, (m->nexit + 1) * sizeof(*v));
	copy = strdup(line);
	if (!v || !copy) {
		free(copy);
		return -HS_ENOSPC;
	}
	m->exit_lines = v;
	v[m->nexit++] = copy;
	return 0;
}

/* A `map` record: into its process's mapping set. */
static int take_map(struct hd_model *m, const struct record *rec)
{
	struct mapping map = { .start = rec->start, .end = rec->end, .offset = rec->off,
			       .path = (char *)rec->path };
	struct maptree *pm = maps_of(m, rec->pid, true);
	int err;

	snprintf(map.build_id, sizeof(map.build_id), "%s", rec->build_id);
	if (m->us && hd_ustacks__map(m->us, rec))
		return -HS_ENOSPC;
	err = pm ? maptree__add(pm, &map) : -ENOMEM;
	if (err == -EINVAL)
		return 1;	/* no range: no mapping to hold any address */
	return err ? -HS_ENOSPC : 1;
}

/*
 * A dump header: the dump before it is complete (--dump all), or was the
 * one --dump names (the rest is ignored); else a new live set, with the
 * exit sections seen so far in it. Returns 1 or a negative hs_err.
 */
static int take_dump(struct hd_model *m, const struct record *rec)
{
	int err = 0;

	if (m->opts.dump && m->ndumps == m->opts.dump) {
		m->done = true;
		return 1;
	}
	if (m->opts.each_dump && m->ndumps)
		m->opts.each_dump(m, m->opts.ctx);
	m->ndumps++;
	m->open_dump = true;
	if (runstats__dump_time(m->rs, m->ndumps, rec->time_s * 1000 + rec->time_ms))
		return -HS_ENOSPC;
	reset(m);
	nodetab__reset(m->nodes);
	/* Its live blocks (and the exit sections before it): sampled? */
	livecount__reset(&m->lc, rec->sample_bytes);
	m->replaying = true;
	for (size_t i = 0; i < m->nexit; i++) {
		struct hd_line x;

		hd_line__parse(&x, m->exit_lines[i]);
		if ((err = hd_model__take(m, &x)) < 0)
			break;
	}
	m->replaying = false;
	return err < 0 ? err : 1;
}

/*
 * What @l says beside its live blocks: a dump header, a map record, the
 * whole-run records; an exit section's lines are kept. Returns 1 if @l
 * is such a record (no live block in it to take), 0 if not, or a
 * negative hs_err.
 */
static int take_meta(struct hd_model *m, const struct hd_line *l)
{
	const struct record *rec = &l->rec;
	int err;

	if (rec->type == REC_DUMP && !m->replaying)
		return take_dump(m, rec);
	if (rec->type == REC_EXIT || rec->type == REC_END_EXIT) {
		m->in_exit = rec->type == REC_EXIT;
		return save_exit_line(m, l->text) ? -HS_ENOSPC : 1;
	}
	if (m->in_exit && save_exit_line(m, l->text))
		return -HS_ENOSPC;
	if (l->parsed)
		return 0;
	if (rec->type == REC_TREE || rec->type == REC_NODE) {
		err = nodetab__take(m->nodes, rec);
		return err < 0 ? err : 1;
	}
	if (rec->type == REC_PROC || rec->type == REC_STACK || rec->type == REC_SAMPLE) {
		/* Whole-run counts, not live blocks: never grouped as such. */
		err = runstats__take(m->rs, rec, m->ndumps, m->nodes);
		if (err > 0)
			m->kept_err = err;
		return err < 0 ? err : 1;
	}
	if (rec->type == REC_FRAME || rec->type == REC_JIT) {
		err = frametab__take(m->frames, rec);
		return err == -ENOMEM ? -HS_ENOSPC : err == -ENOSPC ? -HS_ETOOLONG :
		       err ? -HS_ERECORD : 1;
	}
	if (rec->type == REC_USTACK) {
		/* Held for the live record after it (-s's: never met, not taken). */
		if (m->us && !m->following && hd_ustacks__take(m->us, rec))
			return -HS_ENOSPC;
		return 1;
	}
	if (rec->type != REC_MAP)
		return 0;
	return take_map(m, rec);
}

/*
 * A line with a record keyword whose fields are malformed: one of ours
 * that cannot be taken (a `live` or `stack` record with a token, a
 * `frame`, a `jit`), never read as another program's text. Others (a
 * message that begins with a keyword: "heapsnoop: exit status 3") are
 * not records.
 */
static bool malformed_record(const struct hd_line *l)
{
	enum record_type t = l->rec.type;

	if (l->parsed != -EINVAL)
		return false;
	if (t == REC_FRAME || t == REC_JIT || t == REC_TREE || t == REC_NODE || t == REC_USTACK)
		return true;
	return (t == REC_LIVE || t == REC_STACK) &&
	       (strstr(l->text, "~m#") || strstr(l->text, " node="));
}

/* One live block: @l's `live` record, its tokens (or its node=) one stack. */
static int take_live(struct hd_model *m, const struct hd_line *l)
{
	uint32_t flags = hd_line__cut(l), depth, id;
	uint64_t size;
	int err = nodetab__record(m->nodes, &l->rec, &size, m->fbuf, &depth), n;

	if (err < 0)
		return err;
	/* A continuation that broke: the frames before it, the stack cut. */
	if (err)
		flags |= STACK_TRUNCATED;
	/* --keep-stacks' records: the stack unwound again here, where that is no worse. */
	if (m->us)
		hd_ustacks__apply(m->us, l->rec.pid, l->rec.ptr, m->fbuf, &depth, &flags);
	n = stacks__intern(m->stacks, (uint32_t)l->rec.pid, m->fbuf, depth, flags);
	if (n < 0)
		return -HS_ENOSPC;
	id = (uint32_t)n;
	if (livecount__add(&m->lc, stacks__get(m->stacks, id), id, size, l->rec.shed,
			   &m->total_bytes, &m->total_count))
		return -HS_ENOSPC;
	return err;
}

/* A record line of any kind counted; an end-dump closes its dump. */
static void note_record(struct hd_model *m, const struct hd_line *l)
{
	if (m->replaying || l->rec.type == REC_NONE || l->parsed == HD_LINE_UNREAD)
		return;
	m->records++;
	if (l->rec.type == REC_END_DUMP)
		m->open_dump = false;
}

int hd_model__take(struct hd_model *m, const struct hd_line *l)
{
	const char *tok, *line = l->text;
	struct hs_record rec;
	size_t len, rest = strlen(line);
	uint32_t flags, pid;
	int err;

	if (m->done)
		return 0;
	note_record(m, l);
	forget_join(m);
	m->kept_err = 0;
	if (l->parsed == HD_LINE_UNREAD) {
		nodetab__stop(m->nodes);
		return 0;
	}
	err = take_meta(m, l);
	if (err)
		return err < 0 ? err : m->kept_err;
	if (malformed_record(l))
		return -HS_ERECORD;
	if (l->rec.type == REC_LIVE && !l->parsed)
		return l->rec.token || l->rec.has_node ? take_live(m, l) : 0;
	pid = hd_line__pid(l);
	flags = hd_line__cut(l);
	/* Every `~m#` token of the line is a live block of @pid. */
	while ((tok = hs_token_find(line, rest, &len)) != NULL) {
		struct stack *s;
		int id;

		rest -= (size_t)(tok + len - line);
		line = tok + len;
		m->records++;
		err = hs_token_decode(tok, len, &rec);
		if (err)
			return err;
		id = stacks__intern(m->stacks, pid, rec.frames, rec.depth, flags);
		if (id < 0)
			return -HS_ENOSPC;
		s = stacks__get(m->stacks, (uint32_t)id);
		if (livecount__add(&m->lc, s, (uint32_t)id, rec.size,
				   l->rec.type == REC_LIVE ? l->rec.shed : 0, &m->total_bytes,
				   &m->total_count))
			return -HS_ENOSPC;
	}
	return 0;
}

void hd_model__report_offline(const struct hd_model *m, FILE *out)
{
	if (m->us)
		hd_ustacks__report(m->us, out);
}

int hd_model__stack_of(const struct hd_model *m, const struct hd_line *l, uint64_t *size,
		       uint64_t *frames, uint32_t *depth)
{
	return nodetab__record(m->nodes, &l->rec, size, frames, depth);
}

int hd_model__follow(struct hd_model *m, const struct hd_line *l)
{
	int err;

	m->following = true;
	note_record(m, l);
	forget_join(m);
	m->kept_err = 0;
	if (l->parsed == HD_LINE_UNREAD) {
		nodetab__stop(m->nodes);
		return 0;
	}
	err = take_meta(m, l);
	if (!err && malformed_record(l))
		return -HS_ERECORD;
	return err < 0 ? err : m->kept_err;
}

static void subtract_live(struct stack *into, const struct stack *from)
{
	into->live_count -= from->live_count;
	into->live_bytes -= from->live_bytes;
}

int hd_model__subtract(struct hd_model *m, struct hd_model *base)
{
	forget_join(m);
	m->base = base;
	if (stacks__match(m->stacks, base->stacks, subtract_live))
		return -HS_ENOSPC;
	m->total_bytes -= base->total_bytes;
	m->total_count -= base->total_count;
	return runstats__subtract(m->rs, base->rs);
}

bool hd_model__is_diff(const struct hd_model *m)
{
	return m->base != NULL;
}

unsigned int hd_model__dumps(const struct hd_model *m)
{
	return m->ndumps;
}

bool hd_model__incomplete(const struct hd_model *m)
{
	return m->ndumps && m->open_dump;
}

uint64_t hd_model__records(const struct hd_model *m)
{
	return m->records;
}

const int64_t *hd_model__dump_times(const struct hd_model *m, unsigned int *n)
{
	return runstats__dump_times(m->rs, n);
}

uint64_t hd_model__sample_bytes(const struct hd_model *m)
{
	return m->lc.mean;
}

uint64_t hd_model__shed_blocks(const struct hd_model *m)
{
	return m->lc.shed_blocks;
}

bool hd_model__estimated(const struct hd_model *m)
{
	return m->lc.mean || m->lc.shed_blocks;
}

double hd_model__live_stderr(const struct hd_model *m)
{
	return sqrt(m->lc.var);
}

void hd_model__estimate(const struct hd_model *m, uint64_t size, uint64_t shed, uint64_t *bytes,
			double *count)
{
	livecount__one(&m->lc, size, shed, bytes, count);
}

/* Biggest first, signed (--base), then most allocations. */
static int by_signed_bytes(const void *a, const void *b)
{
	const struct stack *x = *(struct stack *const *)a, *y = *(struct stack *const *)b;

	if (x->live_bytes != y->live_bytes)
		return (int64_t)x->live_bytes < (int64_t)y->live_bytes ? 1 : -1;
	if (x->live_count != y->live_count)
		return (int64_t)x->live_count < (int64_t)y->live_count ? 1 : -1;
	return 0;
}

/* The stacks of @st with live values, into @v (*@n of them). */
static void live_of(const struct stacks *st, struct stack **v, size_t *n)
{
	size_t count = stacks__count(st);

	*n = 0;
	for (size_t i = 0; i < count; i++) {
		struct stack *s = stacks__get(st, (uint32_t)i);

		if (s->live_count || s->live_bytes)
			v[(*n)++] = s;
	}
}

struct stack **hd_model__live_stacks(struct hd_model *m, size_t *n)
{
	size_t count = stacks__count(m->stacks);
	struct stack **v = malloc((count ? count : 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	live_of(m->stacks, v, n);
	if (m->opts.frames) {
		/* --frames: the view's stacks, never more than the model's. */
		if (!m->view)
			m->view = frameview__new(m, m->opts.frames, v, *n);
		if (!m->view) {
			free(v);
			*n = 0;
			return NULL;
		}
		live_of(m->view, v, n);
	}
	qsort(v, *n, sizeof(*v), by_signed_bytes);
	return v;
}

void hd_model__totals(const struct hd_model *m, uint64_t *bytes, uint64_t *count)
{
	*bytes = m->total_bytes;
	*count = m->total_count;
}

struct rs_proc **hd_model__procs(struct hd_model *m, size_t *n)
{
	return runstats__procs(m->rs, n);
}

const struct rs_proc *hd_model__proc(const struct hd_model *m, uint32_t pid)
{
	return runstats__proc(m->rs, (int)pid);
}

const char *hd_model__comm(const struct hd_model *m, uint32_t pid)
{
	const struct rs_proc *p = runstats__proc(m->rs, (int)pid);

	return p && p->comm[0] ? p->comm : NULL;
}

struct stack **hd_model__run_stacks(struct hd_model *m, size_t *n)
{
	return runstats__stacks(m->rs, n);
}

const struct rs_point *hd_model__history(const struct hd_model *m, size_t id, size_t *n)
{
	return runstats__history(m->rs, id, n);
}

struct rs_sample *hd_model__series(const struct rs_proc *p, size_t *n)
{
	return runstats__series(p, n);
}

int hd_model__join(struct hd_model *m, const struct hd_joined **v, size_t *n)
{
	size_t nl, nr;
	struct stack **live, **run;

	*v = NULL;
	*n = 0;
	if (!m->join) {
		live = hd_model__live_stacks(m, &nl);
		run = runstats__stacks(m->rs, &nr);
		m->join = live && run ? join__new(live, nl, run, nr) : NULL;
		free(live);
		free(run);
		if (!m->join)
			return -ENOMEM;
	}
	*v = join__entries(m->join, n);
	return 0;
}

uint32_t *hd_model__pids(struct hd_model *m, size_t *n)
{
	const struct hd_joined *v;

	if (hd_model__join(m, &v, n))
		return NULL;
	return join__pids(m->join, n);
}

const struct mapping *hd_model__mapping(struct hd_model *m, uint32_t pid, uint64_t addr)
{
	struct maptree *pm = m->opts.elf ? NULL : maps_of(m, (pid_t)pid, false);

	/* A stack only the baseline had: its own dump's mappings. */
	if (!m->opts.elf && m->base && !(pm && maptree__find(pm, addr)))
		pm = maps_of(m->base, (pid_t)pid, false);
	return pm ? maptree__find(pm, addr) : NULL;
}

void hd_model__lookup(struct hd_model *m, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	const struct mapping *map;

	if (addr == FRAMEVIEW_NATIVE) {
		*f = (struct sym_frame){ .status = SYM_OK, .func = FRAMEVIEW_NATIVE_NAME };
		return;
	}
	/* An interpreter frame: its record, or the baseline's (a stack only it had). */
	if (rec_is_frame_addr(addr)) {
		if (m->base && !frametab__known(m->frames, pid, addr) &&
		    frametab__known(m->base->frames, pid, addr))
			m = m->base;
		frametab__symbolize(m->frames, pid, addr, f);
		return;
	}
	if (m->opts.elf) {
		symbolizer__lookup_elf(m->sym, m->opts.elf, addr, true, f);
		return;
	}
	/*
	 * JIT code, this dump's or the baseline's, before the mappings: its
	 * ranges lie in anonymous memory, which the tracer's map records
	 * name "[anon]" (a file's code is never in a jit record's range).
	 */
	if (frametab__symbolize(m->frames, pid, addr, f) ||
	    (m->base && frametab__symbolize(m->base->frames, pid, addr, f)))
		return;
	map = hd_model__mapping(m, pid, addr);
	symbolizer__lookup(m->sym, map, addr, true, f);
}

size_t hd_model__missing_frames(const struct hd_model *m)
{
	return frametab__missing(m->frames) + (m->base ? frametab__missing(m->base->frames) : 0);
}

void hd_model__frame_name(const struct sym_frame *f, uint64_t addr, char *buf, size_t cap)
{
	/* An interpreter's frame: its function and where in it, "f (file.py:12)". */
	if (f->status == SYM_OK && f->kind && f->file && f->line)
		snprintf(buf, cap, "%s (%s:%d)", f->func, path_base(f->file), f->line);
	else if (f->status == SYM_OK && f->kind && f->file)
		snprintf(buf, cap, "%s (%s)", f->func, path_base(f->file));
	else if (f->status == SYM_OK && f->kind)
		snprintf(buf, cap, "%s", f->func);
	else if (f->status == SYM_OK)
		snprintf(buf, cap, "%s", f->func);
	else if (f->module && f->status != SYM_UNMAPPED)
		snprintf(buf, cap, "[%s+%#" PRIx64 "]", path_base(f->module),
			 framefmt__module_off(f));
	else
		snprintf(buf, cap, "[%#" PRIx64 "]", addr);
}

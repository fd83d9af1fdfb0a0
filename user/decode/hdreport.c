// SPDX-License-Identifier: MIT
/*
 * hdreport.c - grouping and symbolized output for heapdecode (see
 * hdreport.h). Identical (pid, stack) records are interned once in the
 * same unique-stack table heapsnoop uses (stacks.c); their count and bytes
 * accumulate there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "flamegraph.h"
#include "framefmt.h"
#include "htab.h"
#include "hdreport.h"
#include "livecount.h"
#include "maptree.h"
#include "msg.h"
#include "records.h"
#include "stacks.h"
#include "text.h"

struct hdreport {
	struct hd_opts opts;
	struct symbolizer *sym;
	struct stacks *stacks;
	struct htab *maps;	/* pid -> struct maptree, from `map` records */
	uint64_t total_bytes, total_count;
	struct livecount lc;	/* the sums, scaled if the dump is sampled */
	/*
	 * The lines of `exit` sections (heapsnoop -a --leaks-at-exit): leaks
	 * of processes that ended, part of every later live set, so replayed
	 * after each dump header resets it.
	 */
	char **exit_lines;
	size_t nexit;
	bool in_exit, replaying;
	struct hdreport *base;	/* --base: subtracted (hdreport__subtract) */
	unsigned int ndumps;	/* dump headers taken in */
	bool done;		/* past the dump --dump names: ignore the rest */
	struct runstats *rs;
};

struct hdreport *hdreport__new(const struct hd_opts *opts, struct symbolizer *sym)
{
	struct hdreport *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->opts = *opts;
	r->sym = sym;
	r->stacks = stacks__new();
	r->rs = runstats__new();
	if (!r->stacks || !r->rs) {
		stacks__free(r->stacks);
		runstats__free(r->rs);
		free(r);
		return NULL;
	}
	return r;
}

struct runstats *hdreport__runstats(struct hdreport *r)
{
	return r->rs;
}

unsigned int hdreport__dumps(const struct hdreport *r)
{
	return r->ndumps;
}

static void reset(struct hdreport *r)
{
	struct maptree *pm;
	size_t pos = 0;

	while (r->maps && (pm = htab__next(r->maps, &pos, NULL)))
		maptree__free(pm);
	htab__free(r->maps);
	r->maps = NULL;
	stacks__free(r->stacks);
	r->stacks = stacks__new();
	r->total_bytes = r->total_count = 0;
}

void hdreport__free(struct hdreport *r)
{
	if (!r)
		return;
	reset(r);
	livecount__reset(&r->lc, 0);
	for (size_t i = 0; i < r->nexit; i++)
		free(r->exit_lines[i]);
	free(r->exit_lines);
	stacks__free(r->stacks);
	runstats__free(r->rs);
	free(r);
}

/* @pid's mappings (one hash lookup a frame), made if @create; NULL. */
static struct maptree *maps_of(struct hdreport *r, pid_t pid, bool create)
{
	uint64_t h = htab_hash2((uint32_t)pid, 0);
	struct maptree *pm = r->maps ? htab__find(r->maps, h, (uint32_t)pid) : NULL;

	if (pm || !create)
		return pm;
	if (!r->maps)
		r->maps = htab__new(64, NULL, NULL);
	pm = r->maps ? maptree__new() : NULL;
	if (pm && htab__add(r->maps, h, (uint32_t)pid, pm)) {
		maptree__free(pm);
		pm = NULL;
	}
	return pm;
}

/*
 * The pid of a line's `~m#` records: a `live` record's, else the first
 * "pid=" of a log line that is not heapsnoop's (0: none).
 */
static pid_t line_pid(const char *line, const struct record *rec)
{
	const char *p;

	if (rec->type == REC_LIVE)
		return rec->pid;
	p = strstr(line, "pid=");
	return p ? (pid_t)strtol(p + 4, NULL, 10) : 0;
}

static int save_exit_line(struct hdreport *r, const char *line)
{
	char **v, *copy;

	if (r->replaying)
		return 0;
	v = realloc(r->exit_lines, (r->nexit + 1) * sizeof(*v));
	copy = strdup(line);
	if (!v || !copy) {
		free(copy);
		return -HS_ENOSPC;
	}
	r->exit_lines = v;
	v[r->nexit++] = copy;
	return 0;
}

/* A `map` record: into its process's mapping set. */
static int take_map(struct hdreport *r, const struct record *rec)
{
	struct mapping m = { .start = rec->start, .end = rec->end, .offset = rec->off,
			     .path = (char *)rec->path };
	struct maptree *pm = maps_of(r, rec->pid, true);
	int err;

	snprintf(m.build_id, sizeof(m.build_id), "%s", rec->build_id);
	err = pm ? maptree__add(pm, &m) : -ENOMEM;
	if (err == -EINVAL)
		return 1;	/* no range: no mapping to hold any address */
	return err ? -HS_ENOSPC : 1;
}

/*
 * @line parsed as @rec: a dump header starts a new live set (with the
 * exit sections seen so far in it); a map record adds to its process's
 * mappings; an exit section's lines are kept. Returns 1 if @line was a
 * dump or map record (nothing else in it to take), 0 if not, -HS_ENOSPC.
 */
static int take_meta(struct hdreport *r, const char *line, const struct record *rec,
		     int parsed)
{
	int err = 0;

	if (rec->type == REC_DUMP && !r->replaying) {
		if (r->opts.dump && r->ndumps == r->opts.dump) {
			r->done = true;
			return 1;
		}
		if (r->opts.each_dump && r->ndumps)
			r->opts.each_dump(r, r->opts.ctx);
		r->ndumps++;
		if (runstats__dump_time(r->rs, r->ndumps, rec->time_s * 1000 + rec->time_ms))
			return -HS_ENOSPC;
		reset(r);
		/* Its live blocks (and the exit sections before it): sampled? */
		livecount__reset(&r->lc, rec->sample_bytes);
		r->replaying = true;
		for (size_t i = 0; i < r->nexit; i++)
			if ((err = hdreport__line(r, r->exit_lines[i])) < 0)
				break;
		r->replaying = false;
		return err < 0 ? err : 1;
	}
	if (rec->type == REC_EXIT || rec->type == REC_END_EXIT) {
		r->in_exit = rec->type == REC_EXIT;
		return save_exit_line(r, line) ? -HS_ENOSPC : 1;
	}
	if (r->in_exit && save_exit_line(r, line))
		return -HS_ENOSPC;
	if (parsed)
		return 0;
	if (rec->type == REC_PROC || rec->type == REC_STACK || rec->type == REC_SAMPLE) {
		/* Whole-run counts, not live blocks: never grouped as such. */
		err = runstats__take(r->rs, rec, r->ndumps);
		return err < 0 ? err : 1;
	}
	if (rec->type != REC_MAP)
		return 0;
	return take_map(r, rec);
}

/* A `live` record's cut= as stacks.h's flags (0 for any other line). */
static uint32_t stack_flags(const struct record *hr)
{
	uint32_t f = 0;

	if (hr->type == REC_LIVE && (hr->cut & REC_CUT_DEPTH))
		f |= STACK_TRUNCATED;
	if (hr->type == REC_LIVE && (hr->cut & REC_CUT_UNREADABLE))
		f |= STACK_FAULT;
	return f;
}

int hdreport__line(struct hdreport *r, const char *line)
{
	struct hs_record rec;
	struct record hr;
	const char *tok;
	size_t len, rest = strlen(line);
	uint32_t flags;
	pid_t pid;
	int err;

	if (r->done)
		return 0;
	err = take_meta(r, line, &hr, records__parse(line, &hr));
	if (err)
		return err < 0 ? err : 0;
	pid = line_pid(line, &hr);
	flags = stack_flags(&hr);
	while ((tok = hs_token_find(line, rest, &len)) != NULL) {
		struct stack *s;
		int id;

		rest -= (size_t)(tok + len - line);
		line = tok + len;
		err = hs_token_decode(tok, len, &rec);
		if (err)
			return err;
		id = stacks__intern(r->stacks, (uint32_t)pid, rec.frames, rec.depth, flags);
		if (id < 0)
			return -HS_ENOSPC;
		s = stacks__get(r->stacks, (uint32_t)id);
		if (livecount__add(&r->lc, s, (uint32_t)id, rec.size, &r->total_bytes,
				   &r->total_count))
			return -HS_ENOSPC;
	}
	return 0;
}

static void lookup(struct hdreport *r, uint32_t pid, uint64_t addr, struct sym_frame *f);
static void print_frame(struct hdreport *r, uint32_t pid, uint32_t k, uint64_t addr, FILE *out);

int hdreport__symbolize_line(struct hdreport *r, const char *line, FILE *out)
{
	size_t len, end = strlen(line);
	const char *p, *tok;
	struct hs_record rec;
	struct record hr;
	char bl[HS_BLINE_BUF];
	uint32_t pid;
	int err = take_meta(r, line, &hr, records__parse(line, &hr));

	if (err < 0)
		return err;
	/* A malformed token anywhere: the line passes unchanged. */
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		err = hs_token_decode(tok, len, &rec);
		if (err) {
			fprintf(out, "%s\n", line);
			return err;
		}
	}
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		hs_token_decode(tok, len, &rec);
		fwrite(p, 1, (size_t)(tok - 3 - p), out);
		if (hs_bline_format(&rec, bl, sizeof(bl)) > 0)
			fputs(bl, out);
	}
	fprintf(out, "%s\n", p);
	pid = (uint32_t)line_pid(line, &hr);
	for (p = line; (tok = hs_token_find(p, end - (size_t)(p - line), &len)); p = tok + len) {
		hs_token_decode(tok, len, &rec);
		for (uint32_t k = 0; k < rec.depth; k++)
			print_frame(r, pid, k, rec.frames[k], out);
		if (stack_flags(&hr))
			fprintf(out, "    (%s)\n", framefmt__cut(stack_flags(&hr)));
		if (r->lc.mean && hr.type == REC_LIVE) {
			uint64_t bytes;
			double count;

			livecount__one(&r->lc, rec.size, &bytes, &count);
			fprintf(out, "    (sampled: stands for %" PRIu64 " bytes in %.2f allocations, "
				"estimated)\n", bytes, count);
		}
	}
	return 0;
}

uint64_t hdreport__sample_bytes(const struct hdreport *r)
{
	return r->lc.mean;
}

/* A report of a sampled live set says first that its numbers are estimates. */
static void say_estimated(const struct hdreport *r, FILE *out)
{
	if (r->lc.mean)
		fprintf(out, "estimated: the dump is a sample by bytes, one per %" PRIu64
			" bytes on average; each sampled block counts as the bytes and "
			"allocations it stands for\n", r->lc.mean);
}

void hdreport__lookup(struct hdreport *r, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	lookup(r, pid, addr, f);
}

void hdreport__write_frame(struct hdreport *r, const char *indent, uint32_t pid, uint32_t k,
			   uint64_t addr, FILE *out)
{
	struct sym_frame f;

	lookup(r, pid, addr, &f);
	framefmt__write(out, indent, k, addr, &f);
}

static void lookup(struct hdreport *r, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	if (r->opts.elf)
		symbolizer__lookup_elf(r->sym, r->opts.elf, addr, true, f);
	else
		symbolizer__lookup(r->sym, hdreport__mapping(r, pid, addr), addr, true, f);
}

static void print_frame(struct hdreport *r, uint32_t pid, uint32_t k, uint64_t addr, FILE *out)
{
	hdreport__write_frame(r, "    ", pid, k, addr, out);
}

/* A frame's name for folded stacks: function, or [module+0xoff]. */
static void frame_name(const struct sym_frame *f, uint64_t addr, char *buf, size_t cap)
{
	if (f->status == SYM_OK)
		snprintf(buf, cap, "%.*s", (int)symbol_unversioned_len(f->func), f->func);
	else if (f->module && f->status != SYM_UNMAPPED)
		snprintf(buf, cap, "[%s+%#" PRIx64 "]", path_base(f->module), f->elf_addr);
	else
		snprintf(buf, cap, "[%#" PRIx64 "]", addr);
	/* ';' and ' ' separate frames and the value in the folded format. */
	for (char *c = buf; *c; c++)
		if (*c == ';' || *c == ' ')
			*c = '_';
}

/* A row of a grouped report: a key and what is live under it. */
struct keyed {
	char *key;
	uint64_t bytes, count;
	uint64_t cut;	/* allocations of those whose stack is incomplete */
};

static int keyed_by_key(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* Biggest first; signed, for the differences of --base. */
static int keyed_by_bytes(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->bytes != y->bytes)
		return (int64_t)x->bytes < (int64_t)y->bytes ? 1 : -1;
	if (x->count != y->count)
		return (int64_t)x->count < (int64_t)y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

/*
 * Rows with equal keys summed into one (the others' keys freed), then
 * sorted by bytes, biggest first. Returns the number of rows left.
 */
static size_t merge_rows(struct keyed *rows, size_t m)
{
	size_t k = 0;

	qsort(rows, m, sizeof(*rows), keyed_by_key);
	for (size_t i = 0; i < m; i++) {
		if (k && !strcmp(rows[k - 1].key, rows[i].key)) {
			rows[k - 1].bytes += rows[i].bytes;
			rows[k - 1].count += rows[i].count;
			rows[k - 1].cut += rows[i].cut;
			free(rows[i].key);
			continue;
		}
		rows[k++] = rows[i];
	}
	/* With --base, what did not change at all is not shown. */
	for (size_t i = m = 0; i < k; i++) {
		if (rows[i].bytes || rows[i].count)
			rows[m++] = rows[i];
		else
			free(rows[i].key);
	}
	k = m;
	qsort(rows, k, sizeof(*rows), keyed_by_bytes);
	return k;
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

/*
 * The stacks with live allocations (with --base: whose live values
 * changed), biggest first, as a malloc'ed array of *@n; NULL: no memory.
 */
static struct stack **live_stacks(struct hdreport *r, size_t *n)
{
	size_t count = stacks__count(r->stacks);
	struct stack **v = malloc((count ? count : 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < count; i++) {
		struct stack *s = stacks__get(r->stacks, (uint32_t)i);

		if (s->live_count || s->live_bytes)
			v[(*n)++] = s;
	}
	qsort(v, *n, sizeof(*v), by_signed_bytes);
	return v;
}

struct stack **hdreport__live_stacks(struct hdreport *r, size_t *n)
{
	return live_stacks(r, n);
}

const struct mapping *hdreport__mapping(struct hdreport *r, uint32_t pid, uint64_t addr)
{
	struct maptree *pm = r->opts.elf ? NULL : maps_of(r, (pid_t)pid, false);

	/* A stack only the baseline had: its own dump's mappings. */
	if (!r->opts.elf && r->base && !(pm && maptree__find(pm, addr)))
		pm = maps_of(r->base, (pid_t)pid, false);
	return pm ? maptree__find(pm, addr) : NULL;
}

static void subtract_live(struct stack *into, const struct stack *from)
{
	into->live_count -= from->live_count;
	into->live_bytes -= from->live_bytes;
}

int hdreport__subtract(struct hdreport *r, struct hdreport *base)
{
	r->base = base;
	if (stacks__match(r->stacks, base->stacks, subtract_live))
		return -HS_ENOSPC;
	r->total_bytes -= base->total_bytes;
	r->total_count -= base->total_count;
	return runstats__subtract(r->rs, base->rs);
}

/*
 * One row per stack with live allocations, keyed by @key_fn; merged.
 * Returns a calloc'ed array of *@n rows, or NULL if out of memory.
 */
static struct keyed *grouped_rows(struct hdreport *r,
				  char *(*key_fn)(struct hdreport *r, const struct stack *s), size_t *n)
{
	size_t ns, m = 0;
	struct stack **v = live_stacks(r, &ns);
	struct keyed *rows = v ? calloc(ns ? ns : 1, sizeof(*rows)) : NULL;

	*n = 0;
	if (rows) {
		for (size_t i = 0; i < ns; i++) {
			rows[m] = (struct keyed){ key_fn(r, v[i]), v[i]->live_bytes, v[i]->live_count,
						  *framefmt__cut(v[i]->flags) ? v[i]->live_count : 0 };
			if (rows[m].key)
				m++;
		}
		*n = merge_rows(rows, m);
	}
	free(v);
	return rows;
}

static void free_rows(struct keyed *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].key);
	free(rows);
}

/* One stack's folded text (root first), in a malloc'ed string. */
static char *fold_stack(struct hdreport *r, const struct stack *s)
{
	char *text = NULL, name[512];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	/* An incomplete stack's root is the mark: it does not reach main. */
	if (*framefmt__cut(s->flags)) {
		snprintf(name, sizeof(name), "[%s]", framefmt__cut(s->flags));
		for (char *c = name; *c; c++)
			if (*c == ' ')
				*c = '_';
		fprintf(f, "%s%s", name, s->depth ? ";" : "");
	}
	if (s->depth == 0)
		fputs("[no stack]", f);
	for (uint32_t k = s->depth; k-- > 0;) {
		struct sym_frame sf;

		lookup(r, s->pid, s->frames[k], &sf);
		frame_name(&sf, s->frames[k], name, sizeof(name));
		fprintf(f, "%s%s", name, k ? ";" : "");
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int hdreport__folded_values(struct hdreport *r, struct stack *const *v, const uint64_t *values,
			    size_t n, FILE *out)
{
	struct keyed *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t m = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		rows[m] = (struct keyed){ values[i] ? fold_stack(r, v[i]) : NULL, values[i], 0 };
		if (rows[m].key)
			m++;
	}
	m = merge_rows(rows, m);
	for (size_t i = 0; i < m; i++)
		fprintf(out, "%s %" PRId64 "\n", rows[i].key, (int64_t)rows[i].bytes);
	free_rows(rows, m);
	return 0;
}

void hdreport__folded(struct hdreport *r, FILE *out)
{
	size_t n;
	struct keyed *rows = grouped_rows(r, fold_stack, &n);

	/* Folded lines have no room for it: standard error says so. */
	if (r->lc.mean)
		elog("the values are estimates: the dump is a sample by bytes, one per %" PRIu64
		     " bytes on average", r->lc.mean);
	/* Stacks that differ only in addresses fold to the same names: merged. */
	for (size_t i = 0; rows && i < n; i++)
		fprintf(out, "%s %" PRId64 "\n", rows[i].key,
			(int64_t)(r->opts.count_values ? rows[i].count : rows[i].bytes));
	free_rows(rows, n);
}

int hdreport__flamegraph(struct hdreport *r, FILE *out, const char *title)
{
	size_t n;
	struct keyed *rows = grouped_rows(r, fold_stack, &n);
	struct folded_line *lines = rows ? calloc(n ? n : 1, sizeof(*lines)) : NULL;
	const char *unit = r->opts.count_values ? "allocations" : "bytes";
	char sampled[600], est_unit[32];
	int err = -ENOMEM;

	if (r->lc.mean) {
		snprintf(sampled, sizeof(sampled), "%s (estimated from a sample by bytes, mean %"
			 PRIu64 ")", title, r->lc.mean);
		snprintf(est_unit, sizeof(est_unit), "estimated %s", unit);
		title = sampled;
		unit = est_unit;
	}
	if (lines) {
		for (size_t i = 0; i < n; i++) {
			int64_t v = (int64_t)(r->opts.count_values ? rows[i].count : rows[i].bytes);

			lines[i] = (struct folded_line){ rows[i].key, (uint64_t)(v < 0 ? -v : v),
							 r->base ? v : 0 };
		}
		err = flamegraph__write(out, lines, n, title, unit);
	}
	free(lines);
	free_rows(rows, n);
	return err;
}

/* The --by key of stack @s: its pid, or frame 0's function or module. */
static char *key_of(struct hdreport *r, const struct stack *s)
{
	struct sym_frame f;
	char *k = NULL, name[512];

	if (r->opts.by == HD_BY_PID) {
		if (asprintf(&k, "pid %u", s->pid) < 0)
			return NULL;
		return k;
	}
	if (!s->depth)
		return strdup("[no stack]");
	lookup(r, s->pid, s->frames[0], &f);
	if (r->opts.by == HD_BY_MODULE)
		return strdup(f.module ? f.module : "[unmapped]");
	frame_name(&f, s->frames[0], name, sizeof(name));
	return strdup(name);
}

const char *hdreport__num(const struct hdreport *r, uint64_t v, char *buf)
{
	if (r->base)
		snprintf(buf, 32, "%+" PRId64, (int64_t)v);
	else
		snprintf(buf, 32, "%" PRIu64, v);
	return buf;
}

/* @v's share of the total bytes, in percent (of the total change). */
static double share(const struct hdreport *r, uint64_t v)
{
	return r->total_bytes ? 100.0 * (double)(int64_t)v / (double)(int64_t)r->total_bytes : 0;
}

static void report_by_key(struct hdreport *r, FILE *out)
{
	static const char *const what[] = { "stack", "process", "function", "module" };
	size_t k;
	struct keyed *rows = grouped_rows(r, key_of, &k);
	char b1[32], b2[32];

	if (!rows)
		return;
	say_estimated(r, out);
	for (size_t i = 0; i < k; i++) {
		fprintf(out, "%s bytes (%.1f%%) in %s allocations: %s",
			hdreport__num(r, rows[i].bytes, b1), share(r, rows[i].bytes),
			hdreport__num(r, rows[i].count, b2), rows[i].key);
		if (rows[i].cut)
			fprintf(out, " (%" PRIu64 " with an incomplete stack)", rows[i].cut);
		fputc('\n', out);
	}
	fprintf(out, "total%s: %s bytes in %s allocations from %zu %s%s\n",
		r->lc.mean ? " (estimated)" : "", hdreport__num(r, r->total_bytes, b1), hdreport__num(r, r->total_count, b2), k,
		what[r->opts.by], k == 1 ? "" : "s");
	free_rows(rows, k);
}

static void report_by_stack(struct hdreport *r, FILE *out)
{
	size_t n;
	struct stack **v = live_stacks(r, &n);
	char b1[32], b2[32];

	if (!v)
		return;
	say_estimated(r, out);
	for (size_t i = 0; i < n; i++) {
		const struct stack *s = v[i];

		fprintf(out, "%s bytes (%.1f%%) in %s allocations", hdreport__num(r, s->live_bytes, b1),
			share(r, s->live_bytes), hdreport__num(r, s->live_count, b2));
		if (s->pid)
			fprintf(out, " from pid %u", s->pid);
		if (*framefmt__cut(s->flags))
			fprintf(out, " (%s)", framefmt__cut(s->flags));
		fputs(":\n", out);
		for (uint32_t k = 0; k < s->depth; k++)
			print_frame(r, s->pid, k, s->frames[k], out);
	}
	fprintf(out, "total%s: %s bytes in %s allocations from %zu stacks\n",
		r->lc.mean ? " (estimated)" : "", hdreport__num(r, r->total_bytes, b1), hdreport__num(r, r->total_count, b2), n);
	free(v);
}

void hdreport__report(struct hdreport *r, FILE *out)
{
	if (r->opts.by == HD_BY_STACK)
		report_by_stack(r, out);
	else
		report_by_key(r, out);
}

bool hdreport__is_diff(const struct hdreport *r)
{
	return r->base != NULL;
}

enum hd_by hdreport__by(const struct hdreport *r)
{
	return r->opts.by;
}

bool hdreport__counts(const struct hdreport *r)
{
	return r->opts.count_values;
}

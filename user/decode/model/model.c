// SPDX-License-Identifier: MIT
/*
 * model.c - heapdecode's model of a log (see model.h): the records
 * of the dump asked for taken in, identical (pid, stack) records interned
 * once in the same unique-stack table heapsnoop uses (stacks.c), their
 * count and bytes accumulated there; the mappings, the baseline. Its
 * grouped outputs are hdgroup.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "framefmt.h"
#include "model.h"
#include "model_int.h"
#include "input/logread.h"
#include "maptree.h"
#include "msg.h"
#include "records.h"
#include "stacks.h"


struct hd_model *hd_model__new(const struct hd_opts *opts, struct symbolizer *sym)
{
	struct hd_model *r = calloc(1, sizeof(*r));

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

struct runstats *hd_model__runstats(struct hd_model *r)
{
	return r->rs;
}

unsigned int hd_model__dumps(const struct hd_model *r)
{
	return r->ndumps;
}

static void reset(struct hd_model *r)
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

void hd_model__free(struct hd_model *r)
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
static struct maptree *maps_of(struct hd_model *r, pid_t pid, bool create)
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

static int save_exit_line(struct hd_model *r, const char *line)
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
static int take_map(struct hd_model *r, const struct record *rec)
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
 * @l: a dump header starts a new live set (with the exit sections seen
 * so far in it); a map record adds to its process's mappings; an exit
 * section's lines are kept. Returns 1 if @l was a dump or map record
 * (nothing else in it to take), 0 if not, -HS_ENOSPC.
 */
static int take_meta(struct hd_model *r, const struct hd_line *l)
{
	const struct record *rec = &l->rec;
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
		for (size_t i = 0; i < r->nexit; i++) {
			struct hd_line x;

			hd_line__parse(&x, r->exit_lines[i]);
			if ((err = hd_model__line(r, &x)) < 0)
				break;
		}
		r->replaying = false;
		return err < 0 ? err : 1;
	}
	if (rec->type == REC_EXIT || rec->type == REC_END_EXIT) {
		r->in_exit = rec->type == REC_EXIT;
		return save_exit_line(r, l->text) ? -HS_ENOSPC : 1;
	}
	if (r->in_exit && save_exit_line(r, l->text))
		return -HS_ENOSPC;
	if (l->parsed)
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

int hd_model__line(struct hd_model *r, const struct hd_line *l)
{
	const char *tok, *line = l->text;
	struct hs_record rec;
	size_t len, rest = strlen(line);
	uint32_t flags, pid;
	int err;

	if (r->done)
		return 0;
	err = take_meta(r, l);
	if (err)
		return err < 0 ? err : 0;
	pid = hd_line__pid(l);
	flags = hd_line__cut(l);
	while ((tok = hs_token_find(line, rest, &len)) != NULL) {
		struct stack *s;
		int id;

		rest -= (size_t)(tok + len - line);
		line = tok + len;
		err = hs_token_decode(tok, len, &rec);
		if (err)
			return err;
		id = stacks__intern(r->stacks, pid, rec.frames, rec.depth, flags);
		if (id < 0)
			return -HS_ENOSPC;
		s = stacks__get(r->stacks, (uint32_t)id);
		if (livecount__add(&r->lc, s, (uint32_t)id, rec.size, &r->total_bytes,
				   &r->total_count))
			return -HS_ENOSPC;
	}
	return 0;
}

int hd_model__follow(struct hd_model *r, const struct hd_line *l)
{
	int err = take_meta(r, l);

	return err < 0 ? err : 0;
}

void hd_model__estimate(const struct hd_model *r, uint64_t size, uint64_t *bytes, double *count)
{
	livecount__one(&r->lc, size, bytes, count);
}

uint64_t hd_model__sample_bytes(const struct hd_model *r)
{
	return r->lc.mean;
}

/* A report of a sampled live set says first that its numbers are estimates. */
void hd_model_say_estimated(const struct hd_model *r, FILE *out)
{
	if (r->lc.mean)
		fprintf(out, "estimated: the dump is a sample by bytes, one per %" PRIu64
			" bytes on average; each sampled block counts as the bytes and "
			"allocations it stands for\n", r->lc.mean);
}

void hd_model__lookup(struct hd_model *r, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	if (r->opts.elf)
		symbolizer__lookup_elf(r->sym, r->opts.elf, addr, true, f);
	else
		symbolizer__lookup(r->sym, hd_model__mapping(r, pid, addr), addr, true, f);
}

void hd_model__write_frame(struct hd_model *r, const char *indent, uint32_t pid, uint32_t k,
			   uint64_t addr, FILE *out)
{
	struct sym_frame f;

	hd_model__lookup(r, pid, addr, &f);
	framefmt__write(out, indent, k, addr, &f);
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
static struct stack **live_stacks(struct hd_model *r, size_t *n)
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

struct stack **hd_model__live_stacks(struct hd_model *r, size_t *n)
{
	return live_stacks(r, n);
}

const struct mapping *hd_model__mapping(struct hd_model *r, uint32_t pid, uint64_t addr)
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

int hd_model__subtract(struct hd_model *r, struct hd_model *base)
{
	r->base = base;
	if (stacks__match(r->stacks, base->stacks, subtract_live))
		return -HS_ENOSPC;
	r->total_bytes -= base->total_bytes;
	r->total_count -= base->total_count;
	return runstats__subtract(r->rs, base->rs);
}

bool hd_model__is_diff(const struct hd_model *r)
{
	return r->base != NULL;
}

enum hd_by hd_model__by(const struct hd_model *r)
{
	return r->opts.by;
}

bool hd_model__counts(const struct hd_model *r)
{
	return r->opts.count_values;
}

// SPDX-License-Identifier: MIT
/*
 * runstats.c - the whole-run records of a log gathered (see runstats.h).
 * Stacks are interned in the same unique-stack table heapsnoop uses
 * (stacks.c), keyed by pid and frames, so a stack's records from
 * different dumps land on one entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "htab.h"
#include "input/nodetab.h"
#include "runstats.h"

struct rs_hist {
	size_t n, cap;
	struct rs_point *v;
};

struct runstats {
	struct stacks *stacks;
	uint64_t *frames;		/* a record's stack, decoded (REC_MAX_DEPTH) */
	struct rs_hist *hist;		/* by stack id */
	size_t nhist;
	struct htab *procs;		/* pid -> struct rs_proc */
	struct rs_proc **sorted;
	int64_t *dump_ms;		/* by dump number */
	unsigned int ndumps;
};

struct runstats *runstats__new(void)
{
	struct runstats *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->stacks = stacks__new();
	rs->procs = htab__new(16, NULL, NULL);
	rs->frames = malloc(REC_MAX_DEPTH * sizeof(*rs->frames));
	if (!rs->stacks || !rs->procs || !rs->frames) {
		runstats__free(rs);
		return NULL;
	}
	return rs;
}

void runstats__free(struct runstats *rs)
{
	struct rs_proc *p;
	size_t pos = 0;

	if (!rs)
		return;
	while (rs->procs && (p = htab__next(rs->procs, &pos, NULL))) {
		free(p->samples);
		free(p);
	}
	htab__free(rs->procs);
	for (size_t i = 0; i < rs->nhist; i++)
		free(rs->hist[i].v);
	free(rs->hist);
	stacks__free(rs->stacks);
	free(rs->frames);
	free(rs->sorted);
	free(rs->dump_ms);
	free(rs);
}

static struct rs_proc *proc_of(struct runstats *rs, int pid)
{
	uint64_t h = htab_hash2((uint32_t)pid, 0);
	struct rs_proc *p = htab__find(rs->procs, h, (uint32_t)pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (htab__add(rs->procs, h, (uint32_t)pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

const struct rs_proc *runstats__proc(const struct runstats *rs, int pid)
{
	return htab__find(rs->procs, htab_hash2((uint32_t)pid, 0), (uint32_t)pid);
}

static int take_proc(struct runstats *rs, const struct record *r)
{
	struct rs_proc *p = proc_of(rs, r->pid);

	if (!p)
		return -HS_ENOSPC;
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)strcspn(r->comm, "\r\n"), r->comm);
	p->peak = r->peak;
	p->peak_count = r->peak_count;
	p->peak_time_ms = r->peak_time_s * 1000 + r->peak_time_ms;
	p->allocs = r->allocs;
	p->allocated = r->allocated;
	p->frees = r->frees;
	p->temporary = r->temporary;
	p->live = r->live;
	p->bytes = r->bytes;
	p->shed = r->shed;
	return 0;
}

static int take_sample(struct runstats *rs, const struct record *r)
{
	struct rs_proc *p = proc_of(rs, r->pid);

	if (!p)
		return -HS_ENOSPC;
	if (p->nsamples == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct rs_sample *v = realloc(p->samples, cap * sizeof(*v));

		if (!v)
			return -HS_ENOSPC;
		p->samples = v;
		p->cap = cap;
	}
	p->samples[p->nsamples++] = (struct rs_sample){ r->time_s * 1000 + r->time_ms,
							r->live, r->bytes };
	return 0;
}

/* Stack @id's history, made room for. */
static struct rs_hist *hist_of(struct runstats *rs, size_t id)
{
	struct rs_hist *h = &rs->hist[0];

	if (id >= rs->nhist) {
		size_t n = rs->nhist ? rs->nhist : 64;

		while (n <= id)
			n *= 2;
		h = realloc(rs->hist, n * sizeof(*h));
		if (!h)
			return NULL;
		memset(h + rs->nhist, 0, (n - rs->nhist) * sizeof(*h));
		rs->hist = h;
		rs->nhist = n;
	}
	h = &rs->hist[id];
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 4;
		struct rs_point *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		h->v = v;
		h->cap = cap;
	}
	return h;
}

static int take_stack(struct runstats *rs, const struct record *r, unsigned int dump,
		      const struct nodetab *nt)
{
	struct rs_hist *h;
	struct stack *s;
	uint64_t size;
	uint32_t depth, flags = r->cut & STACK_CUT_ALL;
	int err = nodetab__record(nt, r, &size, rs->frames, &depth), id;

	if (err < 0)
		return err;
	/* A continuation that broke: the frames before it, the stack cut. */
	if (err)
		flags |= STACK_TRUNCATED;
	id = stacks__intern(rs->stacks, (uint32_t)r->pid, rs->frames, depth, flags);
	if (id < 0 || !(h = hist_of(rs, (size_t)id)))
		return -HS_ENOSPC;
	s = stacks__get(rs->stacks, (uint32_t)id);
	s->allocs = r->allocs;
	s->alloc_bytes = r->allocated;
	s->frees = r->frees;
	s->temporary = r->temporary;
	s->live_count = r->live;
	s->live_bytes = r->bytes;
	s->peak_bytes = r->peak;
	s->peak_count = r->peak_count;
	/* One point per dump: a later record of the same dump replaces it. */
	if (h->n && h->v[h->n - 1].dump == dump)
		h->n--;
	h->v[h->n++] = (struct rs_point){ dump, r->live, r->bytes };
	return err;
}

int runstats__take(struct runstats *rs, const struct record *rec, unsigned int dump,
		   const struct nodetab *nt)
{
	switch (rec->type) {
	case REC_PROC:
		return take_proc(rs, rec);
	case REC_STACK:
		return take_stack(rs, rec, dump, nt);
	case REC_SAMPLE:
		return take_sample(rs, rec);
	default:
		return 0;
	}
}

static int by_peak(const void *a, const void *b)
{
	const struct rs_proc *x = *(struct rs_proc *const *)a, *y = *(struct rs_proc *const *)b;

	if (x->peak != y->peak)
		return x->peak < y->peak ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

struct rs_proc **runstats__procs(struct runstats *rs, size_t *n)
{
	size_t pos = 0, k = 0, count = htab__count(rs->procs);
	struct rs_proc **v = realloc(rs->sorted, (count ? count : 1) * sizeof(*v)), *p;

	*n = 0;
	if (!v)
		return NULL;
	rs->sorted = v;
	while ((p = htab__next(rs->procs, &pos, NULL)))
		v[k++] = p;
	qsort(v, k, sizeof(*v), by_peak);
	*n = k;
	return v;
}

struct stack **runstats__stacks(struct runstats *rs, size_t *n)
{
	size_t count = stacks__count(rs->stacks);
	struct stack **v = malloc((count ? count : 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < count; i++)
		v[i] = stacks__get(rs->stacks, (uint32_t)i);
	*n = count;
	return v;
}

const struct rs_point *runstats__history(const struct runstats *rs, size_t id, size_t *n)
{
	*n = id < rs->nhist ? rs->hist[id].n : 0;
	return *n ? rs->hist[id].v : NULL;
}

static void subtract_counts(struct stack *s, const struct stack *b)
{
	s->allocs -= b->allocs;
	s->alloc_bytes -= b->alloc_bytes;
	s->frees -= b->frees;
	s->temporary -= b->temporary;
	s->live_count -= b->live_count;
	s->live_bytes -= b->live_bytes;
	s->peak_count -= b->peak_count;
	s->peak_bytes -= b->peak_bytes;
}

int runstats__subtract(struct runstats *rs, const struct runstats *base)
{
	struct rs_proc *b;
	size_t pos = 0;

	if (stacks__match(rs->stacks, base->stacks, subtract_counts))
		return -HS_ENOSPC;
	while ((b = htab__next(base->procs, &pos, NULL))) {
		struct rs_proc *p = proc_of(rs, b->pid);

		if (!p)
			return -HS_ENOSPC;
		p->peak -= b->peak;
		p->peak_count -= b->peak_count;
		p->allocs -= b->allocs;
		p->allocated -= b->allocated;
		p->frees -= b->frees;
		p->temporary -= b->temporary;
		p->live -= b->live;
		p->bytes -= b->bytes;
	}
	return 0;
}

int runstats__dump_time(struct runstats *rs, unsigned int dump, int64_t time_ms)
{
	if (dump > rs->ndumps) {
		int64_t *v = realloc(rs->dump_ms, (dump + 1) * sizeof(*v));

		if (!v)
			return -HS_ENOSPC;
		if (!rs->dump_ms)
			v[0] = 0;
		memset(v + rs->ndumps + 1, 0, (dump - rs->ndumps) * sizeof(*v));
		rs->dump_ms = v;
		rs->ndumps = dump;
	}
	rs->dump_ms[dump] = time_ms;
	return 0;
}

const int64_t *runstats__dump_times(const struct runstats *rs, unsigned int *n)
{
	*n = rs->ndumps;
	return rs->dump_ms;
}

static int by_time(const void *a, const void *b)
{
	const struct rs_sample *x = a, *y = b;

	return x->time_ms < y->time_ms ? -1 : x->time_ms > y->time_ms;
}

struct rs_sample *runstats__series(const struct rs_proc *p, size_t *n)
{
	struct rs_sample *v = malloc((p->nsamples + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	/* A process with no `sample` record has no array to copy (memcpy's NULL). */
	if (p->nsamples)
		memcpy(v, p->samples, p->nsamples * sizeof(*v));
	*n = p->nsamples;
	if (p->peak)
		v[(*n)++] = (struct rs_sample){ p->peak_time_ms, p->peak_count, p->peak };
	qsort(v, *n, sizeof(*v), by_time);
	return v;
}

// SPDX-License-Identifier: MIT
/*
 * leakgate.c - the CI gates (see leakgate.h): leaks summed after
 * suppressions, peaks compared, and the summary, which names each stack
 * that broke the leak gate as the -s summary shows stacks (framefmt.h)
 * and each suppression with what it took, as LSan's "Suppressions used".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "framefmt.h"
#include "leakgate.h"
#include "msg.h"
#include "suppress.h"

/* A stack that leaked, not suppressed: its bytes and its text. */
struct leak {
	uint64_t bytes, count;
	char *text;
};

/* What one suppression took. */
struct taken {
	uint64_t bytes, count;
};

struct leakgate {
	struct leakgate_opts o;
	struct suppress *sup;
	const struct suppress *rt;	/* the C runtime's, NULL: counted */
	struct suppress_tally rt_taken;
	struct taken *taken;		/* by pattern */
	size_t npat;
	struct leak *leaks;
	size_t nleaks, cap;
	uint64_t leak_bytes, leak_count;
	uint64_t top_peak, top_count;	/* the highest peak seen, */
	uint32_t top_pid;		/* and whose */
	char top_comm[16];
	char *over;			/* the processes above --max-peak, as text */
	size_t over_len;
	FILE *over_f;
	unsigned int nover;
};

int leakgate__option(struct leakgate_opts *o, const char *name, const char *arg)
{
	char *end;
	unsigned long long v = 0;

	if (!strcmp(name, "no-default-suppressions")) {
		o->no_default_supp = true;
		return 0;
	}
	if (!strcmp(name, "suppressions")) {
		o->suppressions = arg;
		return 0;
	}
	if (arg) {
		errno = 0;
		v = strtoull(arg, &end, 10);
		/* strtoull alone takes "-1", " 7" and "+7": digits only here. */
		if (*arg < '0' || *arg > '9' || *end || errno) {
			elog("--%s '%s': give a whole number of bytes", name, arg);
			return -EINVAL;
		}
	}
	if (!strcmp(name, "fail-on-leak")) {
		o->fail_on_leak = true;
		o->leak_bytes = v;
	} else {
		o->max_peak_set = true;
		o->max_peak = v;
	}
	return 0;
}

int leakgate__check(const struct leakgate_opts *o)
{
	if (o->suppressions && !o->fail_on_leak) {
		elog("--suppressions goes with --fail-on-leak (it says which leaks not to count)");
		return -EINVAL;
	}
	return 0;
}

struct leakgate *leakgate__new(const struct leakgate_opts *o)
{
	struct leakgate *g = calloc(1, sizeof(*g));

	if (!g) {
		elog("out of memory");
		return NULL;
	}
	g->o = *o;
	g->rt = o->no_default_supp ? NULL : suppress__runtime();
	if (o->suppressions) {
		g->sup = suppress__load(o->suppressions);
		if (!g->sup) {
			free(g);
			return NULL;
		}
		g->npat = suppress__count(g->sup);
		g->taken = calloc(g->npat ? g->npat : 1, sizeof(*g->taken));
	}
	g->over_f = open_memstream(&g->over, &g->over_len);
	if ((o->suppressions && !g->taken) || !g->over_f) {
		elog("out of memory");
		leakgate__free(g);
		return NULL;
	}
	return g;
}

void leakgate__free(struct leakgate *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nleaks; i++)
		free(g->leaks[i].text);
	free(g->leaks);
	free(g->taken);
	suppress__free(g->sup);
	if (g->over_f)
		fclose(g->over_f);
	free(g->over);
	free(g);
}

/* @s as the summary shows it, a malloc'ed string; NULL: no memory. */
static char *stack_text(const struct stack *s, const char *comm, leakgate_lookup_fn lookup,
			void *ctx)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *cut = framefmt__cut(s->flags);
	struct sym_frame sf;

	if (!f)
		return NULL;
	fprintf(f, "  %" PRIu64 " bytes in %" PRIu64 " allocations from pid %u (%s)%s%s%s:\n",
		s->live_bytes, s->live_count, s->pid, comm && *comm ? comm : "?",
		*cut ? " (" : "", cut, *cut ? ")" : "");
	for (uint32_t k = 0; k < s->depth; k++) {
		lookup(ctx, s->pid, s->frames[k], &sf);
		framefmt__write(f, "    ", k, s->frames[k], &sf);
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int leakgate__stack(struct leakgate *g, const struct stack *s, const char *comm,
		    leakgate_lookup_fn lookup, void *ctx)
{
	int i;

	if (!g->o.fail_on_leak || !s->live_count)
		return 0;
	if (g->rt && (i = suppress__stack(g->rt, s, lookup, ctx)) >= 0) {
		suppress__tally_add(&g->rt_taken, i, s->live_bytes, s->live_count);
		return 0;
	}
	i = g->sup ? suppress__stack(g->sup, s, lookup, ctx) : -1;
	if (i >= 0) {
		g->taken[i].bytes += s->live_bytes;
		g->taken[i].count += s->live_count;
		return 0;
	}
	if (g->nleaks == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct leak *v = realloc(g->leaks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->leaks = v;
		g->cap = cap;
	}
	g->leaks[g->nleaks].text = stack_text(s, comm, lookup, ctx);
	if (!g->leaks[g->nleaks].text)
		return -ENOMEM;
	g->leaks[g->nleaks].bytes = s->live_bytes;
	g->leaks[g->nleaks++].count = s->live_count;
	g->leak_bytes += s->live_bytes;
	g->leak_count += s->live_count;
	return 0;
}

void leakgate__peak(struct leakgate *g, uint32_t pid, const char *comm, uint64_t peak,
		    uint64_t count)
{
	comm = comm && *comm ? comm : "?";
	if (!g->o.max_peak_set)
		return;
	if (peak > g->top_peak || !g->top_pid) {
		g->top_peak = peak;
		g->top_count = count;
		g->top_pid = pid;
		snprintf(g->top_comm, sizeof(g->top_comm), "%s", comm);
	}
	if (peak > g->o.max_peak) {
		g->nover++;
		fprintf(g->over_f, "  pid %u (%s): a peak of %" PRIu64 " bytes in %" PRIu64
			" allocations\n", pid, comm, peak, count);
	}
}

static int by_bytes_desc(const void *a, const void *b)
{
	const struct leak *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The leak gate's part of the summary; true if it broke. */
static bool finish_leaks(struct leakgate *g, FILE *out)
{
	bool broke = g->leak_bytes > g->o.leak_bytes;
	char rt[160];

	if (g->rt_taken.count)
		flog(out, "the C runtime's own, not counted: %s, kept for the process's lifetime "
		     "(--no-default-suppressions counts them)",
		     suppress__tally_text(&g->rt_taken, rt, sizeof(rt)));

	for (size_t i = 0; i < g->npat; i++)
		if (g->taken[i].count)
			flog(out, "suppressed by leak:%s: %" PRIu64 " bytes in %" PRIu64
			     " allocations", suppress__pattern(g->sup, (int)i), g->taken[i].bytes,
			     g->taken[i].count);
	if (!broke) {
		flog(out, "leak gate passed: %" PRIu64 " bytes in %" PRIu64 " allocations live "
		     "at the end, not suppressed (at most %" PRIu64 " allowed)", g->leak_bytes,
		     g->leak_count, g->o.leak_bytes);
		return false;
	}
	flog(out, "LEAK GATE FAILED: %" PRIu64 " bytes in %" PRIu64 " allocations live at the "
	     "end, not suppressed, more than the %" PRIu64 " allowed (--fail-on-leak), from "
	     "these %zu stacks:", g->leak_bytes, g->leak_count, g->o.leak_bytes, g->nleaks);
	qsort(g->leaks, g->nleaks, sizeof(*g->leaks), by_bytes_desc);
	for (size_t i = 0; i < g->nleaks && i < LEAKGATE_SAY_STACKS; i++)
		fputs(g->leaks[i].text, out);
	if (g->nleaks > LEAKGATE_SAY_STACKS)
		fprintf(out, "  ... and %zu stacks more\n", g->nleaks - LEAKGATE_SAY_STACKS);
	return true;
}

int leakgate__finish(struct leakgate *g, FILE *out)
{
	bool leaked = g->o.fail_on_leak && finish_leaks(g, out);

	fflush(g->over_f);
	if (g->o.max_peak_set && g->nover) {
		flog(out, "PEAK GATE FAILED: %u process(es) held more than --max-peak %" PRIu64
		     " bytes live at once:", g->nover, g->o.max_peak);
		fputs(g->over ? g->over : "", out);
	} else if (g->o.max_peak_set) {
		flog(out, "peak gate passed: the highest peak, %" PRIu64 " bytes in %" PRIu64
		     " allocations (pid %u, %s), is at most --max-peak %" PRIu64, g->top_peak,
		     g->top_count, g->top_pid, g->top_pid ? g->top_comm : "none", g->o.max_peak);
	}
	fflush(out);
	if (leaked)
		return HS_EXIT_LEAK;
	return g->o.max_peak_set && g->nover ? HS_EXIT_PEAK : 0;
}

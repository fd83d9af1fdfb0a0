// SPDX-License-Identifier: MIT
/*
 * metrics.c - the agent's /metrics (see metrics.h): each family's HELP
 * and TYPE lines, then its series; label values escaped as the format
 * says (backslash, double quote, newline), since a comm or a function
 * name is the traced program's to choose.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors.h"
#include "holders.h"
#include "metrics.h"
#include "output/status.h"
#include "records.h"
#include "symbolizer.h"
#include "text.h"
#include "track/trace.h"

/* @s as a label value, escaped, into @buf. */
static const char *esc(const char *s, char *buf, size_t cap)
{
	size_t k = 0;

	for (; *s && k + 3 < cap; s++) {
		if (*s == '\\' || *s == '"') {
			buf[k++] = '\\';
			buf[k++] = *s;
		} else if (*s == '\n') {
			buf[k++] = '\\';
			buf[k++] = 'n';
		} else {
			buf[k++] = *s;
		}
	}
	buf[k] = 0;
	return buf;
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* --- the processes ------------------------------------------------------ */

/* A process's row: a traced one's, or a collector's (no totals: its table keeps none). */
struct prow {
	pid_t pid;
	const char *comm, *source;
	bool totals;
	uint64_t v[5];		/* live, blocks, alloc_bytes, allocs, peak */
};

static int by_live(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->v[0] != y->v[0])
		return x->v[0] < y->v[0] ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void proc_series(FILE *out, const struct prow *r, size_t n, const char *name, size_t field)
{
	uint64_t other = 0;
	bool any_other = false;
	char comm[64];

	for (size_t i = 0; i < n; i++) {
		if (!r[i].totals && field >= 2)
			continue;
		if (i >= METRICS_PROCS) {
			other += r[i].v[field];
			any_other = true;
			continue;
		}
		fprintf(out, "%s{pid=\"%d\",comm=\"%s\",source=\"%s\"} %" PRIu64 "\n", name,
			r[i].pid, esc(r[i].comm, comm, sizeof(comm)), r[i].source, r[i].v[field]);
	}
	if (any_other)
		fprintf(out, "%s{pid=\"other\",comm=\"other\",source=\"other\"} %" PRIu64 "\n",
			name, other);
}

/*
 * The rows of the traced processes @v and of the collectors' tables (a
 * snapshot of each: one walk); NULL without memory.
 */
static struct prow *rows(struct proc **v, size_t n, const struct metrics_in *in, size_t *nr)
{
	size_t nc = collectors__count(in->coll), k = 0;
	struct prow *r = calloc(n + nc + 1, sizeof(*r));

	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++)
		r[k++] = (struct prow){ v[i]->pid, v[i]->comm, "bpf", true,
					{ v[i]->live_estimate, tracker__count(v[i]->live),
					  v[i]->acct.alloc_bytes, v[i]->acct.allocs,
					  v[i]->acct.peak_bytes } };
	for (size_t i = 0; i < nc; i++) {
		const struct collector *col = collectors__get(in->coll, i);
		struct lt_snap snap;

		if (lt_snap__take(&snap, &col->view, col->pid)) {
			free(r);
			return NULL;
		}
		r[k++] = (struct prow){ col->pid, col->comm, "collector", false,
					{ snap.bytes, snap.n } };
		lt_snap__free(&snap);
	}
	qsort(r, k, sizeof(*r), by_live);
	*nr = k;
	return r;
}

static int procs(FILE *out, struct proc **v, size_t n, const struct metrics_in *in)
{
	static const struct {
		const char *name, *type, *help;
	} f[] = {
		{ "heapsnoop_live_bytes", "gauge",
		  "Live heap bytes of a process (estimated when sampled); source: bpf (traced) "
		  "or collector (its in-process table)." },
		{ "heapsnoop_live_allocations", "gauge",
		  "Live blocks of a process (the sampled ones when sampled)." },
		{ "heapsnoop_allocated_bytes_total", "counter",
		  "Bytes a traced process allocated since traced (estimated when sampled)." },
		{ "heapsnoop_allocations_total", "counter",
		  "Allocations of a traced process since traced (the sampled ones when sampled)." },
		{ "heapsnoop_peak_bytes", "gauge", "The most live heap bytes of a traced process." },
	};
	size_t nr = 0;
	struct prow *r = rows(v, n, in, &nr);

	if (!r)
		return -ENOMEM;
	family(out, "heapsnoop_processes", "gauge", "Processes traced now, by source.");
	fprintf(out, "heapsnoop_processes{source=\"bpf\"} %zu\n", n);
	fprintf(out, "heapsnoop_processes{source=\"collector\"} %zu\n", nr - n);
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		family(out, f[k].name, f[k].type, f[k].help);
		proc_series(out, r, nr, f[k].name, k);
	}
	free(r);
	return 0;
}

/* --- the call sites ----------------------------------------------------- */

struct top_stack {
	uint64_t bytes;
	const struct proc *p;
	uint32_t id;
};

struct ranking {
	struct top_stack v[METRICS_STACKS];
	unsigned int k;
	const struct proc *p;
	uint64_t total;		/* every stack's live bytes */
};

static int rank(void *ctx, uint32_t id)
{
	struct ranking *r = ctx;
	struct acct_counts c;
	unsigned int j;

	acct__counts(&r->p->acct, id, &c);
	r->total += c.live_bytes;
	if (!c.live_bytes || (r->k == METRICS_STACKS && c.live_bytes <= r->v[r->k - 1].bytes))
		return 0;
	j = r->k < METRICS_STACKS ? r->k++ : METRICS_STACKS - 1;
	for (; j && c.live_bytes > r->v[j - 1].bytes; j--)
		r->v[j] = r->v[j - 1];
	r->v[j] = (struct top_stack){ c.live_bytes, r->p, id };
	return 0;
}

struct site {
	char name[320];
	uint64_t bytes;
};

/* The stack's site: its innermost frame outside the runtime, "func file:line". */
static void site_name(struct symbolizer **sym, const struct top_stack *s, char *buf, size_t cap)
{
	uint64_t frames[REC_MAX_DEPTH];
	uint32_t n = stack_tree__frames(s->p->stacks, s->id, frames);

	snprintf(buf, cap, "[no stack]");
	for (uint32_t i = 0; i < n; i++) {
		const struct mapping *m = s->p->maps ? mapset__find(s->p->maps, frames[i]) : NULL;
		struct sym_frame f;

		if (!m)
			continue;
		if (!*sym)
			*sym = symbolizer__new(NULL);
		if (!*sym || symbolizer__lookup(*sym, m, frames[i], true, &f) ||
		    f.status != SYM_OK) {
			snprintf(buf, cap, "%s+0x%" PRIx64, path_base(m->path),
				 frames[i] - m->start + m->offset);
			if (i + 1 < n)
				continue;
			return;
		}
		f.module = m->path;
		if (holders__is_runtime(&f) && i + 1 < n)
			continue;
		if (f.file && f.line)
			snprintf(buf, cap, "%s %s:%d", f.func, path_base(f.file), f.line);
		else
			snprintf(buf, cap, "%s", f.func);
		return;
	}
}

static int by_bytes(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

static int sites(FILE *out, struct proc **v, size_t n)
{
	struct ranking *r = calloc(1, sizeof(*r));
	struct site *s = calloc(METRICS_STACKS, sizeof(*s));
	struct symbolizer *sym = NULL;
	uint64_t shown = 0;
	unsigned int ns = 0;
	char name[320], e[700];

	if (!r || !s) {
		free(r);
		free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		r->p = v[i];
		stack_tree__for_each(v[i]->stacks, false, rank, r);
	}
	for (unsigned int i = 0; i < r->k; i++) {
		unsigned int j;

		site_name(&sym, &r->v[i], name, sizeof(name));
		for (j = 0; j < ns && strcmp(s[j].name, name); j++)
			;
		if (j == ns)
			snprintf(s[ns++].name, sizeof(s->name), "%s", name);
		s[j].bytes += r->v[i].bytes;
	}
	qsort(s, ns, sizeof(*s), by_bytes);
	family(out, "heapsnoop_site_live_bytes", "gauge",
	       "Live heap bytes by call site (innermost frame outside the allocator), every "
	       "process; the sites past the top ones under site=\"other\".");
	for (unsigned int i = 0; i < ns && i < METRICS_SITES; i++) {
		fprintf(out, "heapsnoop_site_live_bytes{site=\"%s\"} %" PRIu64 "\n",
			esc(s[i].name, e, sizeof(e)), s[i].bytes);
		shown += s[i].bytes;
	}
	fprintf(out, "heapsnoop_site_live_bytes{site=\"other\"} %" PRIu64 "\n", r->total - shown);
	symbolizer__free(sym);
	free(r);
	free(s);
	return 0;
}

/* --- the events and the agent ------------------------------------------ */

static void counter(FILE *out, const char *name, const char *help, uint64_t v)
{
	family(out, name, "counter", help);
	fprintf(out, "%s %" PRIu64 "\n", name, v);
}

static void gauge(FILE *out, const char *name, const char *help, double v)
{
	family(out, name, "gauge", help);
	fprintf(out, "%s %.17g\n", name, v);
}

static void events(FILE *out, struct trace *t, const struct metrics_in *in)
{
	const struct trace_stats *st = trace__stats(t);

	family(out, "heapsnoop_events_total", "counter", "Allocation and free events handled.");
	fprintf(out, "heapsnoop_events_total{kind=\"alloc\"} %" PRIu64 "\n", st->allocs);
	fprintf(out, "heapsnoop_events_total{kind=\"free\"} %" PRIu64 "\n", st->frees);
	counter(out, "heapsnoop_events_lost_total",
		"Events lost (the ring buffer full, no state, bad pointers): live bytes may be off.",
		status__lost(in->cnt));
	counter(out, "heapsnoop_events_shed_total",
		"Allocations recorded as samples of known weight while load was shed.",
		in->cnt[HS_CNT_SHED]);
	counter(out, "heapsnoop_unknown_frees_total",
		"Frees of blocks not live: allocated before tracing, or not sampled.",
		st->unknown_frees);
	gauge(out, "heapsnoop_sample_bytes",
	      "The sampling mean, bytes (one allocation recorded per this many); 0: every one.",
	      (double)trace__sample_bytes(t));
}

static void agent(FILE *out, struct trace *t, const struct metrics_in *in)
{
	family(out, "heapsnoop_agent_resident_bytes", "gauge",
	       "The agent's resident memory: anon its own heap and stacks; file the pages of "
	       "the traced programs' files it reads (CFI, symbols) and its own; shmem shared.");
	fprintf(out, "heapsnoop_agent_resident_bytes{kind=\"anon\"} %" PRIu64 "\n", in->rss_anon);
	fprintf(out, "heapsnoop_agent_resident_bytes{kind=\"file\"} %" PRIu64 "\n", in->rss_file);
	fprintf(out, "heapsnoop_agent_resident_bytes{kind=\"shmem\"} %" PRIu64 "\n", in->rss_shmem);
	family(out, "heapsnoop_agent_table_bytes", "gauge",
	       "Bytes held by the agent's tables: the live blocks, the stacks and their counts.");
	fprintf(out, "heapsnoop_agent_table_bytes{table=\"live\"} %zu\n", trace__live_memory(t));
	fprintf(out, "heapsnoop_agent_table_bytes{table=\"stacks\"} %zu\n", trace__stack_memory(t));
	gauge(out, "heapsnoop_agent_memory_bound_bytes",
	      "--max-memory: the tables' bound, shed past (0: none).",
	      (double)in->memory_bound);
	counter(out, "heapsnoop_agent_over_bound_seconds_total",
		"Seconds the tables held more than --max-memory.", in->over_bound);
	gauge(out, "heapsnoop_agent_over_bound",
	      "1 while over --max-memory: new allocations go under one stack per process.",
	      in->collapsing);
	counter(out, "heapsnoop_agent_collapsed_allocations_total",
		"Allocations put under \"[over the memory bound]\" (their bytes counted, their "
		"stacks not kept).", trace__stats(t)->collapsed);
	family(out, "heapsnoop_agent_requests_total", "counter", "Requests served, by path.");
	fprintf(out, "heapsnoop_agent_requests_total{path=\"/metrics\"} %" PRIu64 "\n",
		in->requests[0]);
	fprintf(out, "heapsnoop_agent_requests_total{path=\"/debug/pprof/heap\"} %" PRIu64 "\n",
		in->requests[1]);
	counter(out, "heapsnoop_agent_requests_refused_total",
		"Requests answered 503: the queue was full.", in->refused);
	counter(out, "heapsnoop_agent_requests_bad_total",
		"Requests answered 400, 404 or 405.", in->bad);
	counter(out, "heapsnoop_agent_snapshots_total",
		"Snapshots forked to answer requests.", in->children);
	counter(out, "heapsnoop_agent_snapshots_failed_total",
		"Snapshots that failed or were killed (their bodies empty or cut).", in->failed);
	counter(out, "heapsnoop_agent_pushes_total",
		"Heap profiles pushed (--push-pyroscope), each a child's.", in->pushes);
	counter(out, "heapsnoop_agent_push_failures_total",
		"Pushes the backend did not take after every try, or killed.", in->push_failed);
	counter(out, "heapsnoop_agent_pushes_skipped_total",
		"Pushes skipped: the last one was still being sent.", in->push_skipped);
	counter(out, "heapsnoop_agent_collector_hellos_total",
		"Hellos of processes running the collector (HEAPSNOOP_AGENT), taken.",
		in->coll_st.hellos);
	counter(out, "heapsnoop_agent_collectors_found_total",
		"Collectors' tables found through /proc that no hello brought (a restart).",
		in->coll_st.found);
	counter(out, "heapsnoop_agent_collectors_refused_total",
		"Collectors' hellos or tables refused (another version, not a sealed table).",
		in->coll_st.refused);
	counter(out, "heapsnoop_agent_collectors_ended_total",
		"Collectors' processes that ended (their live sets gone with them).",
		in->coll_st.ended);
	counter(out, "heapsnoop_agent_collectors_over_total",
		"Collectors' tables not served: more than the agent holds.", in->coll_st.over);
	gauge(out, "heapsnoop_agent_fork_seconds_max",
	      "The event loop's longest stop to fork a snapshot.", in->fork_ms_max / 1000);
}

int metrics__write(struct trace *t, const struct metrics_in *in, FILE *out)
{
	size_t n = 0;
	struct proc **v = trace__procs(t, &n);
	int err;

	if (!v && n)
		return -ENOMEM;
	err = procs(out, v, n, in);
	if (!err)
		err = sites(out, v, n);
	events(out, t, in);
	agent(out, t, in);
	free(v);
	if (err)
		return err;
	return ferror(out) ? -EIO : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - the agent's /metrics: Prometheus's text exposition format
 * (version 0.0.4, prometheus.io/docs/instrumenting/exposition_formats/)
 * from the trace and the agent's own counts. Every label set is bounded:
 * the METRICS_PROCS processes with the most live bytes by pid, comm and
 * source (bpf: traced; collector: a collector's table, collectors.h), the
 * rest summed under pid="other"; the METRICS_SITES call sites with
 * the most live bytes among the METRICS_STACKS largest stacks, the rest
 * under site="other", so each family's series sum to the whole.
 *
 * Run in the agent's forked child (user/tracer/agent.c) on its snapshot.
 */
#ifndef HEAPSNOOP_AGENT_METRICS_H
#define HEAPSNOOP_AGENT_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "collectors.h"
#include "heapsnoop/event.h"

#define METRICS_PROCS	50
#define METRICS_SITES	10
#define METRICS_STACKS	64

struct trace;

/* What the loop knew at the fork, beside the trace. */
struct metrics_in {
	uint64_t cnt[HS_CNT__MAX];	/* the BPF counters (status.h) */
	uint64_t requests[2];		/* served: metrics, heap (httpd.h's routes) */
	uint64_t refused, bad;		/* 503s; 400, 404, 405s */
	uint64_t children, failed;	/* snapshots forked; ... that failed or were killed */
	double fork_ms_max;		/* the loop's longest stop for a fork */
	uint64_t memory_bound;		/* --max-memory, bytes */
	uint64_t over_bound;		/* seconds the tables spent over it */
	bool collapsing;		/* over it now: new allocations under one stack */
	uint64_t pushes, push_failed, push_skipped;	/* --push-pyroscope */
	/* the agent's resident bytes: its own, files' pages, shared (/proc/self/status) */
	uint64_t rss_anon, rss_file, rss_shmem;
	const struct collectors *coll;	/* the collectors' tables (NULL: none), read in the child */
	struct collectors_stats coll_st;
};

/*
 * Write the metrics of @t and @in to @out. The sites are named here
 * (symbolizer.h), innermost frame outside the C runtime and allocator
 * first (holders.h's rule, as --top's). Returns 0, -ENOMEM or -EIO.
 */
int metrics__write(struct trace *t, const struct metrics_in *in, FILE *out);

#endif /* HEAPSNOOP_AGENT_METRICS_H */

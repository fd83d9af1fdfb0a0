/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the loader's state between the ring buffer and the writer:
 * events in (hs_event, include/heapsnoop/event.h), live allocations,
 * unique stacks and each process's mappings out. Also the user-side
 * counts of everything that did not add up.
 */
#ifndef HEAPSNOOP_TRACE_H
#define HEAPSNOOP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/event.h"
#include "procmaps.h"
#include "stacks.h"
#include "tracker.h"

struct trace_opts {
	unsigned int snip_pre;	/* innermost frames to drop */
	unsigned int snip_post;	/* outermost frames to drop (complete stacks) */
};

/* What the user side saw that does not add up, beside the BPF counters. */
struct trace_stats {
	uint64_t allocs, frees;		/* events handled */
	uint64_t unknown_frees;		/* not live: allocated before tracing */
	uint64_t missed_frees;		/* address handed out again while live */
	uint64_t realloc_races;		/* old block re-allocated mid-realloc */
	uint64_t bad_events;		/* malformed ring buffer records */
	uint64_t no_memory;		/* events dropped: out of memory */
	uint64_t truncated_stacks;	/* allocations with a cut stack */
	uint64_t stack_faults;		/* ... with a frame that could not be read */
};

struct proc {
	pid_t pid;
	struct proc_maps *maps;		/* last read, or NULL */
	uint64_t maps_read_ns;
	bool gone;			/* exited; maps are the last read */
};

struct trace;

struct trace *trace__new(const struct trace_opts *opts);
void trace__free(struct trace *t);

/* Handle one ring buffer record of @len bytes. Returns 0 (never fails). */
int trace__event(struct trace *t, const void *data, size_t len);

/* Start tracking @pid and read its mappings now (for -p and launch). */
struct proc *trace__add_proc(struct trace *t, pid_t pid);
/* Re-read @pid's mappings (e.g. at its exit stop, or after dlopen). */
void trace__refresh_maps(struct trace *t, pid_t pid);
/* @pid has exited: keep its last mappings for the final report. */
void trace__proc_gone(struct trace *t, pid_t pid);

struct tracker *trace__tracker(const struct trace *t);
struct stacks *trace__stacks(const struct trace *t);
const struct trace_stats *trace__stats(const struct trace *t);
/* Processes seen, in order of first event. */
size_t trace__nprocs(const struct trace *t);
struct proc *trace__proc(const struct trace *t, size_t i);
struct proc *trace__find_proc(const struct trace *t, pid_t pid);

#endif /* HEAPSNOOP_TRACE_H */

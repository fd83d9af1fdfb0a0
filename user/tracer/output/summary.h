/* SPDX-License-Identifier: MIT */
/*
 * summary.h - the -s summary (docs/OUTPUT.md, "The summary") from the
 * live stacks of each process, whoever held them: the BPF tracer's
 * tracker (report__summary()) and heapsnoop --preload's live tables
 * (plimage.c) each hand theirs over and get the same lines:
 *
 *   heapsnoop: biggest holder: 4.0 KiB in 1 block, load_config (leaky.c:58) <- main (leaky.c:67)
 *   heapsnoop: summary: 14 live allocations, 10.6 KiB, from 4 stacks in 1 process(es) (top 10 ...)
 *       4.0 KiB in 1 allocations from pid 42:
 *           #0  load_config+0x1e (leaky) leaky.c:58
 *   heapsnoop: the C runtime's own, not above: 1.0 KiB in 1 allocations (stdio buffer), ...
 *
 * The headline's holder (holders.h), the top stacks cut below main
 * (stackview.h), the C runtime's stacks apart and a Python that freed
 * its heap said (rtsummary.h). Nothing here knows where the stacks came
 * from: each process's frames are copied in (--preload's, whose images
 * are gone by then), or read when needed through a source its owner
 * holds meanwhile (the tracker's stack trees: no copy of a million
 * stacks), its mappings given.
 */
#ifndef HEAPSNOOP_SUMMARY_H
#define HEAPSNOOP_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "holders.h"
#include "mapset.h"
#include "symbolizer.h"

/* How the summary is written, from the options. */
struct summary_opts {
	bool runtime_apart;	/* the C runtime's own apart: no --no-default-suppressions */
	const char *log;	/* -o FILE, NULL: standard output */
	bool full_stacks;	/* --full-stacks: no stack cut below main (stackview.h) */
};

/*
 * Stack @ref's frames, innermost first, into @out (REC_MAX_DEPTH words
 * of room), from where its process's stacks are kept (the BPF tracer's
 * stack tree); returns how many.
 */
typedef uint32_t (*sum_frames_fn)(void *ctx, uint64_t ref, uint64_t *out);

/* One stack of a process with live blocks. */
struct sum_stack {
	size_t at;		/* its frames: the process's frames[at...], innermost first;
				 * with a source (sum_proc__source()), its ref there */
	uint32_t depth;
	uint32_t cut;		/* REC_CUT_* bits: the stack is incomplete */
	uint64_t bytes, count;	/* live */
	bool runtime;		/* the C runtime's own (rtsummary.h) */
};

/* One process, as the summary reads it. */
struct sum_proc {
	int pid;
	char comm[16];
	const struct mapset *maps;	/* its mappings (sum_proc__maps()), or NULL */
	struct mapset *own_maps;	/* those sum_proc__map() built */
	struct sum_stack *v;		/* its stacks with live blocks */
	size_t n, cap;
	uint64_t *frames;		/* every stack's frames, one after another */
	size_t nframes, frames_cap;
	sum_frames_fn src;		/* or read from there when needed (NULL: copied) */
	void *src_ctx;
	uint64_t live_bytes, live_count;	/* estimated if sampled */
	size_t stacks;			/* every stack it has, live or not */
	/* Whole-run values, for pyexit.h; 0 where not known. */
	bool allocated;
	uint64_t peak, peak_count;
	int64_t peak_ago_ms;		/* -1: not known */
	unsigned int peak_read_ms;	/* 0: the peak counted; else read every so many ms (--preload) */
};

struct summary;

/* An empty summary; NULL without memory. */
struct summary *summary__new(void);
void summary__free(struct summary *s);

/*
 * A new process @pid named @comm (NULL: "?"), its values 0: the caller
 * sets live_bytes, live_count, stacks and the whole-run ones. Processes
 * are written in the order added (most live bytes first is the caller's
 * order). NULL without memory.
 */
struct sum_proc *summary__proc(struct summary *s, int pid, const char *comm);

/*
 * A stack of @p: @depth return addresses @frames (copied), @cut its
 * REC_CUT_* bits, @bytes live in @count blocks. 0 or -ENOMEM.
 */
int sum_proc__stack(struct sum_proc *p, const uint64_t *frames, uint32_t depth, uint32_t cut,
		    uint64_t bytes, uint64_t count);

/*
 * @p's stacks read by @fn(@ctx, ...) when the summary needs them, not
 * copied: what holds them is held by the caller until summary__write()
 * returns (a million stacks of 24 frames are 192 MiB of copies). Then
 * only sum_proc__stack_ref() adds its stacks.
 */
void sum_proc__source(struct sum_proc *p, sum_frames_fn fn, void *ctx);

/* A stack of @p by its @ref in @p's source, @depth frames deep; else as sum_proc__stack(). */
int sum_proc__stack_ref(struct sum_proc *p, uint64_t ref, uint32_t depth, uint32_t cut,
			uint64_t bytes, uint64_t count);

/*
 * Stack @s of @p's frames (@s->depth of them): in @p's copies, or read
 * from its source into @buf (REC_MAX_DEPTH words), then @buf.
 */
const uint64_t *sum_proc__frames(const struct sum_proc *p, const struct sum_stack *s,
				 uint64_t *buf);

/* @p's mappings: @maps, held by the caller until summary__write() returns. */
void sum_proc__maps(struct sum_proc *p, const struct mapset *maps);

/* One mapping of @p, copied (a set of its own, for mappings no set holds). 0 or -ENOMEM. */
int sum_proc__map(struct sum_proc *p, const struct mapping *m);

/*
 * The summary of @s to @out (flog()'s prefix on its own lines): the
 * headline, the totals, with several processes those with live blocks by
 * live bytes (at most @top), then the @top stacks by live bytes (at most
 * 3 per process while more than 3 are left), the C runtime's and
 * Python's lines with @so's runtime_apart. A frame is named by
 * @name(@ctx, ...) first (frames that are not native code: NULL, none),
 * else through @sym from its process's mappings (@sym NULL: by address).
 */
void summary__write(struct summary *s, struct symbolizer *sym, holders_lookup_fn name, void *ctx,
		    unsigned int top, const struct summary_opts *so, FILE *out);

#endif /* HEAPSNOOP_SUMMARY_H */

/* SPDX-License-Identifier: MIT */
/*
 * liveview.h - heapsnoop --top: the live view of the heap on a terminal,
 * redrawn every interval (memleak's periodic top stacks, memray's live
 * mode; docs/OUTPUT.md, "The live view").
 *
 * The loader never stops reading events for it: each redraw is drawn by
 * a forked child from its copy-on-write snapshot of the tables, as a
 * background dump is (bgdump.h): the child picks the stacks holding the
 * most live bytes, names their frames and writes the whole screen in one
 * write(2). The loader's share is the fork and reading back, without
 * blocking, what the child learnt for the next one: the names of the
 * frames it looked up (a cache keyed by file and offset, so the next
 * child looks up only new frames) and the live bytes of the stacks it saw
 * (the growth the next redraw shows). The records written to -o are the
 * loader's alone: the view writes only to the terminal.
 */
#ifndef HEAPSNOOP_LIVEVIEW_H
#define HEAPSNOOP_LIVEVIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "track/trace.h"

struct bpf_map;
struct liveview;

struct liveview_opts {
	unsigned int interval;		/* seconds between redraws, at least 1 */
	int fd;				/* the terminal's (stderr) */
	const struct bpf_map *counters;	/* the BPF counters (status.h), for the losses */
	uint64_t sample_bytes;		/* --sample-bytes' mean, 0: none */
};

/*
 * Switch the terminal @o->fd to its alternate screen (the cursor hidden)
 * and catch SIGWINCH (a resize redraws at once). Returns the view, or
 * NULL: out of memory or no pipe (said; tracing goes on without it).
 */
struct liveview *liveview__new(const struct liveview_opts *o);

/*
 * The loop's periodic step at @now (CLOCK_MONOTONIC seconds): what the
 * last child wrote back read (never blocking), a child that ended
 * reaped, and a new one forked from @t if the interval passed or the
 * terminal was resized and none runs. Failures are said once; the view
 * then stops, tracing goes on.
 */
void liveview__tick(struct liveview *lv, struct trace *t, double now);

/* The loader's longest stop for a redraw so far, ms: the fork. */
double liveview__longest_ms(const struct liveview *lv);

/*
 * Is @pid a child of the view, running or the last one (-a traces its
 * allocations: heapsnoop's own, not a traced process's)? Forgotten at
 * liveview__gone() (its exit event) or the next redraw.
 */
bool liveview__owns(const struct liveview *lv, pid_t pid);
void liveview__gone(struct liveview *lv, pid_t pid);

/*
 * End the view: a child still drawing killed and reaped, the terminal's
 * normal screen and cursor back (so the summary that follows is seen
 * there), the memory freed. NULL: nothing.
 */
void liveview__free(struct liveview *lv);

#endif /* HEAPSNOOP_LIVEVIEW_H */

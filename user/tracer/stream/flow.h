/* SPDX-License-Identifier: MIT */
/*
 * flow.h - when the traced processes must wait for heapsnoop: held once
 * the ring buffer's backlog reaches a high mark, let go once the loop has
 * brought it down to a low one (docs/DESIGN.md, "Nothing lost under
 * load"). What holds them is the caller's (attach/hold.h: the cgroup
 * freezer); this decides when.
 *
 * The loop tells its backlog as it reads (flow__backlog()), and lets go;
 * a watch thread holds when the loop is busy elsewhere (a dump's fork of
 * a large table, a module's CFI opened, /proc read): it sleeps on the
 * ring's descriptor, edge-triggered, woken by the programs at the high
 * mark (their wakeup_bytes) or every FLOW_WATCH_MS, and looks at the
 * backlog itself.
 */
#ifndef HEAPSNOOP_FLOW_H
#define HEAPSNOOP_FLOW_H

#include <stdbool.h>
#include <stdint.h>

/* The watch thread's longest sleep without a wakeup, ms. */
#define FLOW_WATCH_MS 5

struct flow;

struct flow_opts {
	uint64_t high, low;		/* backlog bytes: hold at or above, let go at or below */
	int ring_fd;			/* polls readable at the programs' wakeups */
	uint64_t (*backlog)(void *ctx);	/* the ring's backlog now (thread-safe) */
	int (*hold)(void *ctx, bool on);	/* hold or let go (thread-safe) */
	void *ctx;
};

/*
 * Start deciding for @o (copied), the watch thread running. Returns 0 and
 * *@out, or -errno (epoll, eventfd, pthread_create).
 */
int flow__start(const struct flow_opts *o, struct flow **out);

/* The loop's backlog now: held at the high mark, let go at the low one. */
void flow__backlog(struct flow *f, uint64_t backlog);

/* The processes' hold failed (hold's error): the first error, 0 if none. */
int flow__error(const struct flow *f);

/*
 * Whether the watch thread runs real-time (SCHED_FIFO, where allowed: it
 * reacts at once on a machine whose CPUs are busy).
 */
bool flow__realtime(const struct flow *f);

/* Stop the watch thread, let the processes go, free @f. NULL: nothing. */
void flow__stop(struct flow *f);

#endif /* HEAPSNOOP_FLOW_H */

/* SPDX-License-Identifier: MIT */
/*
 * session_int.h - what the files of one run share (session.h is the
 * outside's view): the session itself, and the steps each file offers
 * the others. session.c starts a run, runs it and frees it, loop.c is its
 * event loop (the ordering rule, signals, dumps) and shutdown.c ends it
 * (the last dump, the accounting, the exit status).
 */
#ifndef HEAPSNOOP_SESSION_INT_H
#define HEAPSNOOP_SESSION_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attach/launch.h"
#include "heapsnoop/event.h"
#include "options.h"
#include "stream/pace.h"

struct link_batch;
struct proc;

/* Longest an event waits in the ring buffer when no wakeup comes, ms. */
#define SESSION_POLL_MS 10

/* Forks of the target said one by one (no -f); the rest are counted. */
#define SESSION_SAY_FORKS 10

/*
 * Process exits (-a, -f), execs (every mode), forks (-p and launch); every
 * thread's exit while thread slots are used (heapsnoop.bpf.c: thread_exit).
 */
struct task_links {
	struct bpf_link *exit, *exec, *fork, *thread_exit;
	struct bpf_link *thread_fork;	/* a new thread's creator (bpf/creator.h) */
};

struct session {
	struct options o;
	struct heapsnoop_bpf *skel;
	struct attachment *att;
	struct reader *rd;	/* the ring buffer and the free logs, in order */
	struct trace *trace;
	struct launch child;
	struct launch_user user;	/* -u */
	struct libc_watch *watch;	/* the allocator files probed (not -a --allocator) */
	struct exec_probe *ep;	/* launch mode: each exec's allocator */
	struct libc_follow *follow;	/* -p, -f: the C libraries mapped later */
	struct mmaprec *mr;	/* -a, -p, -f: the kernel's mapping records */
	struct task_links tl;
	struct gate *gate;	/* --fail-on-leak, --max-peak; NULL: none */
	struct bgdump *bg;	/* SIGUSR1 and -i dumps, written by a child */
	struct liveview *lv;	/* --top: the live view; NULL: none */
	struct interp *interp;	/* interpreter frames (--interp); NULL: none */
	struct tails *tails;	/* deep stacks' tails given threads (unwind/tails.h) */
	struct hold *hold;	/* --on-full hold: the traced processes' cgroup */
	struct flow *flow;	/* ... when they wait; NULL: never */
	struct agent *agent;	/* heapsnoop agent's requests (agent.h); NULL: none */
	uint64_t cnt[HS_CNT__MAX];
	char libpath[PATH_MAX], cmdpath[PATH_MAX];
	const char *reason;	/* of the last dump: "exit", "signal" */
	struct outfile *of;	/* -o, or the log named for a terminal (ttylog.h) */
	char logpath[64];	/* that log's name, "" without one */
	FILE *out, *tty;
	bool launched, forwarded, said_waiting;
	int write_err, child_status, pidfd;
	int nfuncs;	/* -p: allocator functions probed at the start */
	double next_status, next_dump, next_sample;
	uint64_t last_events;
	uint64_t max_backlog;	/* the most the ring held at a drain's start */
	struct pace pace;	/* the poll's timeout, from the records' rate */
	struct pace log_pace;	/* ... and from the logged frees' (one log's size) */
	int timeout_ms;
	uint64_t unfollowed;	/* forks of the target not traced (no -f) */
};

/*
 * loop.c. SIGUSR1 asks for a dump from now on (while starting too: its
 * default would end heapsnoop); SIGINT and SIGTERM stop tracing from now
 * on (before, their default aborts start-up), SIGPIPE is ignored.
 */
void session__catch_dump(void);
void session__catch_stop(void);

/*
 * loop.c, the ordering rule's hooks: the reader's callback for each ring
 * buffer record and for the backlog (reader.h), the trace's for the producer's position and
 * for mapping records to apply (trace.h's trace_opts), and its hook for a
 * process that ends (the gates, --leaks-at-exit). @ctx is the session.
 */
int session__on_record(void *ctx, const void *data, size_t len, uint64_t seq);
void session__on_backlog(void *ctx, uint64_t backlog);
bool session__on_ahead(void *ctx, const void *data, size_t len, uint64_t seq);
uint64_t session__ring_head(void *ctx);
void session__sync_maps(void *ctx);
void session__on_proc_exit(struct proc *p, void *ctx);

/*
 * loop.c: everything waiting, mapping records first, then ring buffer
 * events; returns reader__drain()'s result. -a, before a dump: the
 * processes whose exit was lost, ended.
 */
int session__drain(struct session *s);
void session__reap(struct session *s);

/*
 * loop.c: trace until the target ends or a signal says stop. Returns 0,
 * or HS_EXIT_ERROR after a failed read of the ring buffer.
 */
int session__loop(struct session *s);

/*
 * session.c: the tracepoints' links (@s->tl) given to @b (detach.h) to be
 * destroyed with the probes', and forgotten.
 */
void session__detach_tasks(struct session *s, struct link_batch *b);

/*
 * shutdown.c: detach, drain, write the last dump, -s's summary and the
 * closing accounting after the loop ended with @status. Returns the exit
 * status (session__run()'s, before the gates').
 */
int session__finish(struct session *s, int status);

#endif /* HEAPSNOOP_SESSION_INT_H */

// SPDX-License-Identifier: MIT
/*
 * loop.c - a run of heapsnoop (see session.h) from the first traced
 * allocation to the target's end or a stop: the signals, the event loop
 * that waits at the pace of the records (pace.h), dumps (bgdump.c),
 * samples and the status line, the launched command's stops.
 *
 * The ordering rule lives here and only here: a process's mapping
 * records (mmaprec.c) are applied before its ring buffer events, since
 * its mmap() and exec() came before its allocations.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "attach/execprobe.h"
#include "heapsnoop.skel.h"
#include "heapsnoop/exit.h"
#include "interp/interp.h"
#include "msg.h"
#include "output/bgdump.h"
#include "output/tracegate.h"
#include "output/liveview.h"
#include "output/dump.h"
#include "output/status.h"
#include "session_int.h"
#include "stream/flow.h"
#include "stream/reader.h"
#include "track/mmaprec.h"
#include "track/trace.h"

/* --- signals ----------------------------------------------------------- */

static volatile sig_atomic_t stop_signal, stop_count, stop_from_tty, dump_requested;

static void on_stop(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stop_signal = sig;
	stop_count++;
	/* The terminal sent it to the whole process group, command included. */
	stop_from_tty = si && si->si_code == SI_KERNEL;
}

static void on_usr1(int sig)
{
	(void)sig;
	dump_requested = 1;
}

void session__catch_stop(void)
{
	struct sigaction sa = { .sa_sigaction = on_stop, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void session__catch_dump(void)
{
	signal(SIGUSR1, on_usr1);
}

/* --- the ordering rule: mapping records before ring buffer events ------- */

/* A fork of a traced process that is not followed: said, the first few. */
static void unfollowed_fork(struct session *s, const struct hs_event *ev)
{
	if (++s->unfollowed <= SESSION_SAY_FORKS)
		elog("pid %u forked pid %u: not traced (-f follows children)%s",
		     (unsigned int)ev->old_addr, ev->pid,
		     ev->size == 0 && s->o.follow_forks ? " (too many processes)" : "");
	else if (s->unfollowed == SESSION_SAY_FORKS + 1)
		elog("more forks not traced: counted at the end");
}

/* A child of heapsnoop's own: a dump's writer (bgdump.h) or the view's. */
static bool own_child(const struct session *s, pid_t pid)
{
	return bgdump__owns(s->bg, pid) || liveview__owns(s->lv, pid) ||
	       agent__owns(s->agent, pid);
}

int session__on_record(void *ctx, const void *data, size_t len, uint64_t seq)
{
	struct session *s = ctx;
	const struct hs_event *ev = data;

	if (len >= HS_EVENT_HDR_SIZE && ev->type == HS_EV_FORK && !ev->size)
		unfollowed_fork(s, ev);
	/* -a traces heapsnoop's own dump and view writers too: not traced ones. */
	if (len >= HS_EVENT_FREE_SIZE && own_child(s, (pid_t)ev->pid)) {
		if (ev->type != HS_EV_EXIT)
			return 0;
		bgdump__gone(s->bg, (pid_t)ev->pid);
		liveview__gone(s->lv, (pid_t)ev->pid);
		agent__gone(s->agent, (pid_t)ev->pid);
	}
	/* The target's own end is its exit stop's or its pidfd's (target_ended). */
	if (!s->o.all && len >= HS_EVENT_HDR_SIZE && ev->type == HS_EV_EXIT &&
	    (pid_t)ev->pid == s->o.pid)
		return 0;
	/* Every mapping record of an exiting process is in: apply them first. */
	if (s->mr && len >= HS_EVENT_HDR_SIZE && ev->type == HS_EV_EXIT)
		mmaprec__drain(s->mr);
	return trace__event(s->trace, data, len, seq);
}

/* reader_opts.ahead: an allocation's stack unwound on the pool meanwhile. */
bool session__on_ahead(void *ctx, const void *data, size_t len, uint64_t seq)
{
	struct session *s = ctx;
	const struct hs_event *ev = data;

	/* heapsnoop's own dump writers' records (-a) are dropped in turn. */
	if (len >= HS_EVENT_FREE_SIZE && own_child(s, (pid_t)ev->pid))
		return ev->type != HS_EV_EXIT;
	return trace__ahead(s->trace, data, len, seq);
}

/* reader_opts.flow: the traced processes wait while the backlog is high. */
void session__on_backlog(void *ctx, uint64_t backlog)
{
	struct session *s = ctx;

	if (s->flow)
		flow__backlog(s->flow, backlog);
}

/* trace_opts.ring_head: the ring buffer producer's position now. */
uint64_t session__ring_head(void *ctx)
{
	struct session *s = ctx;

	return reader__head(s->rd);
}

/* trace_opts.sync_maps: an address to unwind is in no mapping yet. */
void session__sync_maps(void *ctx)
{
	struct session *s = ctx;

	if (s->mr)
		mmaprec__drain(s->mr);
}

/* A process ended: to the gates; with live allocations, --leaks-at-exit. */
void session__on_proc_exit(struct proc *p, void *ctx)
{
	struct session *s = ctx;

	gate__proc(s->gate, p);
	if (!s->o.leaks_at_exit || !tracker__count(p->live))
		return;
	if (report__exit(s->trace, p, bgdump__out(s->bg, s->out)) && !s->write_err) {
		s->write_err = -EIO;
		elog("writing records failed: %s", strerror(errno));
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Everything waiting: mapping records, then events (a process's mmap and
 * exec precede its allocations). Returns reader__drain()'s result.
 */
int session__drain(struct session *s)
{
	uint64_t backlog = reader__backlog(s->rd);

	if (backlog > s->max_backlog)
		s->max_backlog = backlog;
	if (s->mr)
		mmaprec__drain(s->mr);
	return reader__drain(s->rd);
}

/*
 * Wait for a wakeup up to the pace's timeout (pace.h: from 1 ms under
 * load to SESSION_POLL_MS; the ring's and the free logs'), then take
 * whatever is there, woken or not:
 * ring_buffer__poll() consumes nothing on a timeout, and
 * records submitted without a wakeup (BPF_RB_NO_WAKEUP below
 * wakeup_bytes) waited for megabytes more, a dump or the exit, so an exec
 * was seen after the process had gone and a dlclose'd module's frames
 * were unwound after it was unmapped. Mapping records go first.
 */
static int wait_events(struct session *s)
{
	struct pollfd pfd[3] = {
		{ .fd = reader__poll_fd(s->rd), .events = POLLIN },
		/* The launched command stopped (its exec, its loader's calls). */
		{ .fd = s->launched ? s->child.wake_fd : -1, .events = POLLIN },
		/* heapsnoop agent: requests wait. */
		{ .fd = agent__wake_fd(s->agent), .events = POLLIN },
	};
	double now;
	int log_ms;

	if (poll(pfd, 3, s->timeout_ms) < 0 && errno != EINTR)
		return -errno;
	now = now_s();
	s->timeout_ms = pace__next(&s->pace, reader__head(s->rd), now);
	/* Every CPU's frees against one CPU's log: early rather than full. */
	log_ms = pace__next(&s->log_pace, reader__logged_frees(s->rd), now);
	if (log_ms < s->timeout_ms)
		s->timeout_ms = log_ms;
	return session__drain(s);
}

/* The child's exit stop: every event it sent is in; read its maps last. */
static void at_child_exit(void *arg)
{
	struct session *s = arg;

	reader__drain(s->rd);
	trace__refresh_maps(s->trace, s->o.pid);
}

/* The child's exec stop, then its loader's system calls (execprobe.h). */
static bool at_child_exec(void *arg, pid_t pid)
{
	struct session *s = arg;
	bool walk = exec_probe__exec(s->ep, pid);

	if (s->interp) {
		/*
		 * The old image's records first, while its code objects are
		 * known: their frames are named from the cache and the deaths
		 * ahead (its memory is the new image's now: never read).
		 */
		session__drain(s);
		interp__look(s->interp, pid, INTERP_AT_EXEC);
	}
	return walk;
}

static bool at_child_syscall(void *arg, pid_t pid, const struct launch_syscall *sc)
{
	struct session *s = arg;
	bool more = exec_probe__syscall(s->ep, pid, sc);

	/* Its C library mapped (or not to be): its interpreter's thread data too. */
	if (!more && s->interp)
		interp__look(s->interp, pid, INTERP_AT_LIBC);
	return more;
}

/* --- the loop ------------------------------------------------------------ */

static bool pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

/* The target is gone (its exit stop, or its pidfd): true to stop. */
static bool target_ended(struct session *s)
{
	static const struct launch_hooks hooks = {
		.at_exec = at_child_exec, .at_syscall = at_child_syscall, .at_exit = at_child_exit,
	};
	struct launch_hooks h = hooks;
	bool done;

	h.ctx = s;
	if (s->launched)
		done = launch__poll(&s->child, &h, &s->child_status);
	else
		done = pidfd_exited(s->pidfd);
	if (done) {
		session__drain(s);
		trace__proc_gone(s->trace, s->o.pid);
	}
	return done;
}

/*
 * Launch mode: the first SIGINT/SIGTERM ends the command (passed on
 * unless the terminal sent it to the command already) and tracing goes
 * on to its exit; a second one stops at once. True to stop.
 */
static bool stop_requested(struct session *s)
{
	if (stop_signal && s->launched && stop_count == 1 && !s->forwarded) {
		s->forwarded = true;
		if (!stop_from_tty)
			kill(s->child.pid, stop_signal);
	} else if (stop_signal && (!s->launched || stop_count > 1)) {
		session__drain(s);
		s->reason = "signal";
		return true;
	}
	return false;
}

/*
 * -a, before a dump: an exit event lost to a full ring buffer left its
 * process in the tables, and every later dump showed it live. Only if
 * some were lost: with none, every exit came as an event.
 */
void session__reap(struct session *s)
{
	size_t n;

	status__read_counters(s->skel->maps.counters, s->cnt);
	if (!s->cnt[HS_CNT_RB_LOST_TASK])
		return;
	n = trace__reap(s->trace);
	if (n)
		elog("%zu processes whose exit was lost are gone: ended now", n);
}

/*
 * SIGUSR1 and -i: the dump is written by a child from its snapshot while
 * this loop reads events (bgdump.c); one asked for while one is written
 * follows it. Only if fork fails is it written here, the loop stopped.
 */
static void start_dump(struct session *s, double now)
{
	bool interval = s->next_dump && now >= s->next_dump;

	if (!dump_requested && !interval)
		return;
	if (bgdump__running(s->bg)) {
		if (dump_requested && !s->said_waiting)
			elog("a dump is being written: the one asked for (SIGUSR1) follows it");
		s->said_waiting = dump_requested;
		return;
	}
	session__drain(s);
	if (s->o.all)
		session__reap(s);
	interp__settle(s->interp);
	bgdump__dump(s->bg, s->trace, s->out, dump_requested ? "usr1" : "interval",
		     s->o.all ? s->o.summary : 0);
	if (interval)
		s->next_dump = now + s->o.interval;
	dump_requested = 0;
	s->said_waiting = false;
}

/* Dumps (a finished one's end, the next one), samples, the status line. */
static void periodic(struct session *s, double now)
{
	bgdump__reap(s->bg, false);
	start_dump(s, now);
	if (s->o.sample_ms && now >= s->next_sample) {
		if (report__samples(s->trace, bgdump__out(s->bg, s->out)))
			elog("writing records failed: %s", strerror(errno));
		s->next_sample = now + s->o.sample_ms / 1000.0;
	}
	if (s->tty && now >= s->next_status) {
		const struct trace_stats *st = trace__stats(s->trace);
		uint64_t ev = st->allocs + st->frees;

		status__read_counters(s->skel->maps.counters, s->cnt);
		status__line(s->tty, s->trace, s->cnt,
			     (double)(ev - s->last_events) / (now - s->next_status + 1));
		s->last_events = ev;
		s->next_status = now + 1;
	}
	liveview__tick(s->lv, s->trace, now);
	agent__tick(s->agent, s->trace, s->skel->maps.counters, now);
}

int session__loop(struct session *s)
{
	double t0 = now_s();
	int err;

	s->next_status = t0 + 1;
	s->next_dump = s->o.interval ? t0 + s->o.interval : 0;
	if (s->o.top) {
		struct liveview_opts lo = { .interval = s->o.top, .fd = STDERR_FILENO,
					    .counters = s->skel->maps.counters,
					    .sample_bytes = s->o.sample_bytes };

		s->lv = liveview__new(&lo);
	}
	for (;;) {
		err = wait_events(s);
		if (err < 0 && err != -EINTR) {
			elog("reading the ring buffer failed: %s", strerror(-err));
			return HS_EXIT_ERROR;
		}
		if (target_ended(s) || stop_requested(s))
			return 0;
		periodic(s, now_s());
	}
}

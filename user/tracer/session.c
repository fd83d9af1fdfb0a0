// SPDX-License-Identifier: MIT
/*
 * session.c - one run of heapsnoop (see session.h): start-up in the order
 * the data path needs it, the event loop, and shutdown. Data flows one
 * way: BPF (bpf/heapsnoop.bpf.c) -> ring buffer -> trace.c (tracker,
 * stacks, maps) -> report.c -> records (docs/OUTPUT.md).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "bgdump.h"
#include "bpfload.h"
#include "execprobe.h"
#include "gate.h"
#include "heapsnoop.skel.h"
#include "frametab.h"
#include "interp/interp.h"
#include "launch.h"
#include "libcfollow.h"
#include "libcwatch.h"
#include "mmaprec.h"
#include "msg.h"
#include "outfile.h"
#include "pace.h"
#include "report.h"
#include "reader.h"
#include "session.h"
#include "status.h"
#include "symbolizer.h"
#include "target.h"
#include "trace.h"

/*
 * Process exits (-a, -f), execs (every mode), forks (-p and launch); every
 * thread's exit while thread slots are used (heapsnoop.bpf.c: thread_exit).
 */
struct task_links {
	struct bpf_link *exit, *exec, *fork, *thread_exit;
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
	struct interp *interp;	/* interpreter frames (--interp); NULL: none */
	uint64_t cnt[HS_CNT__MAX];
	char libpath[PATH_MAX], cmdpath[PATH_MAX];
	const char *reason;	/* of the last dump: "exit", "signal" */
	struct outfile *of;	/* -o */
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

static void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_stop, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
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

static int on_record(void *ctx, const void *data, size_t len, uint64_t seq)
{
	struct session *s = ctx;
	const struct hs_event *ev = data;

	if (len >= HS_EVENT_HDR_SIZE && ev->type == HS_EV_FORK && !ev->size)
		unfollowed_fork(s, ev);
	/* -a traces heapsnoop's own dump writers too: not a traced process's. */
	if (len >= HS_EVENT_FREE_SIZE && bgdump__owns(s->bg, (pid_t)ev->pid)) {
		if (ev->type != HS_EV_EXIT)
			return 0;
		bgdump__gone(s->bg, (pid_t)ev->pid);
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

/* trace_opts.ring_head: the ring buffer producer's position now. */
static uint64_t ring_head(void *ctx)
{
	struct session *s = ctx;

	return reader__head(s->rd);
}

/* interp_opts.peek: the ring's records after the one being handled. */
static int ring_peek(void *ctx, uint64_t from,
		     void (*fn)(void *fctx, const void *data, size_t len, uint64_t pos), void *fctx,
		     uint64_t *to)
{
	struct session *s = ctx;

	return reader__peek(s->rd, from, fn, fctx, to);
}

/*
 * interp_opts.frame_addr: the synthetic address of an interpreter frame
 * (frametab.h), the same for the same (process, kind, function, file,
 * line); 0 when the table is full or out of memory (the stack is cut
 * there).
 */
static uint64_t frame_addr(void *ctx, pid_t pid, const struct interp_frame *f)
{
	static const char *const kinds[HS_INTERP__MAX] = { [HS_INTERP_PYTHON] = "python",
								    [HS_INTERP_LUA] = "lua" };
	struct session *s = ctx;
	uint64_t addr;

	if (f->kind >= HS_INTERP__MAX || !kinds[f->kind] ||
	    frametab__intern(trace__frames(s->trace), (uint32_t)pid, kinds[f->kind], f->function,
			     f->file, f->line, &addr))
		return 0;
	return addr;
}

/* trace_opts' interp hooks. */
static void interp_record(void *ictx, const struct hs_event *ev, size_t len, uint64_t seq)
{
	interp__record(ictx, ev, len, seq);
}

static uint32_t interp_splice(void *ictx, const struct hs_event *ev, uint64_t seq,
			      const uint64_t *native, uint32_t n, bool native_cut,
			      const struct unwind_grab *grab, uint64_t *out, uint32_t max,
			      uint32_t *flags)
{
	return interp__splice(ictx, ev, seq, native, n, native_cut, grab, out, max, flags);
}

static bool interp_grab(void *ictx, pid_t pid, uint64_t *lo, uint64_t *hi)
{
	return interp__grab(ictx, pid, lo, hi);
}

/* trace_opts.sync_maps: an address to unwind is in no mapping yet. */
static void sync_maps(void *ctx)
{
	struct session *s = ctx;

	if (s->mr)
		mmaprec__drain(s->mr);
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
static int drain(struct session *s)
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
	struct pollfd pfd[2] = {
		{ .fd = reader__epoll_fd(s->rd), .events = POLLIN },
		/* The launched command stopped (its exec, its loader's calls). */
		{ .fd = s->launched ? s->child.wake_fd : -1, .events = POLLIN },
	};
	double now;
	int log_ms;

	if (poll(pfd, 2, s->timeout_ms) < 0 && errno != EINTR)
		return -errno;
	now = now_s();
	s->timeout_ms = pace__next(&s->pace, reader__head(s->rd), now);
	/* Every CPU's frees against one CPU's log: early rather than full. */
	log_ms = pace__next(&s->log_pace, reader__logged_frees(s->rd), now);
	if (log_ms < s->timeout_ms)
		s->timeout_ms = log_ms;
	return drain(s);
}

/*
 * The last of both, probes detached: the records, then the watcher they
 * call closed, then the events. Returns the mapping records lost.
 */
static uint64_t drain_last(struct session *s)
{
	uint64_t lost;

	drain(s);
	lost = s->mr ? mmaprec__lost(s->mr) : 0;
	mmaprec__free(s->mr);	/* before the watcher it calls */
	s->mr = NULL;
	libc_watch__free(s->watch);
	s->watch = NULL;
	reader__drain(s->rd);
	return lost;
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
		drain(s);
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

/* --- start-up ------------------------------------------------------------ */

/* A process ended: to the gates; with live allocations, --leaks-at-exit. */
static void on_proc_exit(struct proc *p, void *ctx)
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

/*
 * -a: mapping records first (nothing mapped from now on is missed), then
 * process exits/execs, then one set of probes per C library (or the one
 * --allocator names). Returns 0 or -errno, said on stderr.
 */
static int start_syswide(struct session *s)
{
	struct mmaprec_opts mo = { .trace = s->trace };
	const struct options *o = &s->o;
	int err;

	if (!o->allocator) {
		s->watch = libc_watch__new(s->skel, -1, o->verbose);
		if (!s->watch)
			return -ENOMEM;
		mo.on_file = libc_watch__on_file;
		mo.ctx = s->watch;
	}
	err = mmaprec__new(s->skel->maps.mmap_records, 256, &mo, &s->mr);
	if (err) {
		elog("cannot read the kernel's mapping records (perf_event_open): %s%s",
		     strerror(-err), err == -EACCES || err == -EPERM ?
		     " (run as root, or with CAP_PERFMON)" : "");
		return err;
	}
	s->tl.exit = bpf_program__attach(s->skel->progs.task_exit);
	s->tl.exec = s->tl.exit ? bpf_program__attach(s->skel->progs.task_exec) : NULL;
	if (s->tl.exec && o->comm)
		s->tl.fork = bpf_program__attach(s->skel->progs.comm_fork);
	if (!s->tl.exec || (o->comm && !s->tl.fork)) {
		err = -errno;
		elog("cannot attach to the sched_process_exit/exec/fork tracepoints: %s",
		     strerror(-err));
		return err;
	}
	if (o->comm) {
		err = bpfload__trace_named(s->skel, o->comm);
		if (err < 0)
			return err;
	}
	if (o->allocator)
		return attach__allocator(s->skel, o->allocator, -1, o->verbose, &s->att);
	err = libc_watch__scan(s->watch);
	if (err < 0) {
		elog("no process maps a C library heapsnoop could probe");
		return err;
	}
	return 0;
}

/*
 * -p and launch mode: the process's execs (a wrapper such as env, nice or
 * sh -c 'exec ...' execs the real program): its old image's heap closed,
 * the new image's mappings read (trace.c); its forks, followed with -f
 * (and then the children's exits). The target goes into the BPF side's
 * table of traced processes first. Returns 0 or -errno, said.
 */
static int attach_tasks(struct session *s)
{
	int err = bpfload__trace_pid(s->skel, s->o.pid);

	if (err)
		return err;
	s->tl.exec = bpf_program__attach(s->skel->progs.task_exec);
	s->tl.fork = s->tl.exec ? bpf_program__attach(s->skel->progs.task_fork) : NULL;
	if (s->tl.fork && s->o.follow_forks)
		s->tl.exit = bpf_program__attach(s->skel->progs.task_exit);
	if (!s->tl.fork || (s->o.follow_forks && !s->tl.exit)) {
		err = -errno;
		elog("cannot attach to the sched_process_exec/fork/exit tracepoints: %s",
		     strerror(-err));
		return err;
	}
	return 0;
}

/*
 * -p and launch mode's probes: one set per allocator file (libcwatch.c),
 * for the target alone or, with -f, every process (filtered in BPF). -p:
 * the process's allocator now; launch mode: each image's at its exec. The
 * C libraries mapped later by -p's process or -f's children are probed
 * as the kernel's mapping records name them (not with --allocator: one
 * file for all). Returns 0 or -errno, said.
 */
static int start_probes(struct session *s)
{
	struct mmaprec_opts mo = { .on_file = libc_follow__on_file,
				   .on_task = libc_follow__on_task };
	const struct options *o = &s->o;
	bool fresh;
	int err;

	s->watch = libc_watch__new(s->skel, o->follow_forks ? -1 : o->pid, o->verbose);
	if (!s->watch || (s->launched && !(s->ep = exec_probe__new(s->watch, o->allocator,
									 o->verbose)))) {
		elog("out of memory");
		return -ENOMEM;
	}
	if (!s->launched) {
		s->nfuncs = libc_watch__probe(s->watch, s->libpath, &fresh);
		if (s->nfuncs < 0 && !fresh)	/* else attach.c said why */
			elog("cannot read %s: %s", s->libpath, strerror(-s->nfuncs));
		if (s->nfuncs < 0)
			return s->nfuncs;
	}
	if (o->allocator || (s->launched && !o->follow_forks))
		return 0;
	mo.ctx = s->follow = libc_follow__new(s->watch, o->pid, s->launched ? o->pid : 0,
					      o->follow_forks);
	if (!s->follow) {
		elog("out of memory");
		return -ENOMEM;
	}
	/* 64 KiB a CPU: records of the system's mmaps for 10 ms, a few traced. */
	err = mmaprec__new(s->skel->maps.mmap_records, 16, &mo, &s->mr);
	if (err)
		elog("cannot read the kernel's mapping records (perf_event_open): %s", strerror(-err));
	return err;
}

/*
 * The trace, the command held (launch mode), the probes, the ring buffer.
 * Returns 0 or -errno, said; a held command is ended on failure.
 */
static int start_tracing(struct session *s)
{
	struct options *o = &s->o;
	int err;

	/* Before the first /proc maps read, which notes the producer's position. */
	err = reader__open(bpf_map__fd(s->skel->maps.events), o->ringbuf_mb << 20,
			   s->skel->rodata->have_free_log ? bpf_map__fd(s->skel->maps.free_logs) : -1,
			   bpf_map__max_entries(s->skel->maps.free_logs), on_record, s, &s->rd);
	if (err) {
		elog("cannot map the ring buffer or the free logs: %s", strerror(-err));
		return err;
	}
	if (o->interp && !o->all) {
		s->interp = interp__new(&(struct interp_opts){
			.skel = s->skel, .python = o->interp & OPT_INTERP_PYTHON,
			.lua = o->interp & OPT_INTERP_LUA,
			.follow_forks = o->follow_forks, .verbose = o->verbose,
			.peek = ring_peek, .head = ring_head, .frame_addr = frame_addr,
			.ctx = s });
		if (!s->interp) {
			elog("out of memory");
			return -ENOMEM;
		}
	}
	pace__init(&s->pace, o->ringbuf_mb << 20, 1, SESSION_POLL_MS);
	pace__init(&s->log_pace, HS_FREE_LOG_ENTRIES, 1, SESSION_POLL_MS);
	s->timeout_ms = SESSION_POLL_MS;
	s->trace = trace__new(&(struct trace_opts){ .snip_pre = o->snip_pre,
						    .snip_post = o->snip_post,
						    .map_records = o->all,
						    .unwind = !o->unwind_fp,
						    .no_jit_names = o->no_perf_map,
						    .sample_bytes = o->sample_bytes,
						    .on_exit = o->leaks_at_exit || s->gate ?
							       on_proc_exit : NULL,
						    .sync_maps = sync_maps,
						    .ring_head = ring_head,
						    .ctx = s,
						    .interp_record = s->interp ? interp_record : NULL,
						    .interp_splice = s->interp ? interp_splice : NULL,
						    .interp_grab = s->interp ? interp_grab : NULL,
						    .ictx = s->interp });
	if (!s->trace) {
		elog("out of memory");
		return -ENOMEM;
	}
	if (o->argv) {
		/*
		 * pymalloc's fast path is inlined at every call site of Debian's
		 * python3.x (LTO): no probe sees its objects. Under
		 * PYTHONMALLOC=malloc each is a malloc'ed block.
		 */
		if ((o->interp & OPT_INTERP_PYTHON) && !getenv("PYTHONMALLOC")) {
			if (setenv("PYTHONMALLOC", "malloc", 1))
				return -errno;
			if (o->verbose)
				elog("PYTHONMALLOC=malloc for the command: a Python it runs allocates "
				     "each object with malloc (--interp none, or PYTHONMALLOC set, "
				     "leaves it alone)");
		}
		if (o->user && (err = launch_user__init(&s->user, o->user)))
			return err;
		err = launch__prepare(o->argv, s->cmdpath, sizeof(s->cmdpath),
				      o->user ? &s->user : NULL, &s->child);
		if (err) {
			elog("cannot run %s: %s", o->argv[0], strerror(-err));
			return err;
		}
		s->launched = true;
		err = target__check_command(s->cmdpath);
		if (err)
			goto abort;
		o->pid = s->child.pid;
	}
	/* Before the probes: no call may leave its thread's slot busy unseen. */
	if (bpf_program__autoload(s->skel->progs.thread_exit)) {
		s->tl.thread_exit = bpf_program__attach(s->skel->progs.thread_exit);
		if (!s->tl.thread_exit) {
			err = -errno;
			elog("cannot attach to the sched_process_exit tracepoint: %s",
			     strerror(-err));
			goto abort;
		}
	}
	if (o->all)
		err = start_syswide(s);
	else if (!(err = attach_tasks(s)))
		err = start_probes(s);
	s->skel->bss->armed = true;
	if (err) {
		if (err == -ESRCH)
			elog("process %d exited while heapsnoop was attaching", o->pid);
		goto abort;
	}
	return 0;
abort:
	if (s->launched)
		launch__abort(&s->child);
	return err ? err : -EINVAL;
}

/* Say what is traced; let the held command go, or watch the process. */
static int announce(struct session *s)
{
	const struct options *o = &s->o;
	int err;

	if (o->all) {
		int n = s->watch ? libc_watch__count(s->watch) : 1;

		elog("tracing all processes: %d C librar%s probed%s", n,
		     s->watch && n == 1 ? "y" : "ies",
		     o->comm || o->npids || o->uid >= 0 ? " (filtered)" : "");
	} else if (s->launched) {
		/* Each exec then says which allocator it probes (execprobe.c). */
		elog("tracing %s (pid %d%s%s)", s->cmdpath, o->pid, o->user ? ", as " : "",
		     o->user ? o->user : "");
		err = launch__go(&s->child);
		if (err) {
			elog("cannot run %s: %s", s->cmdpath, strerror(-err));
			return err;
		}
	} else {
		trace__add_proc(s->trace, o->pid);
		if (s->interp)
			interp__look(s->interp, o->pid, INTERP_RUNNING);
		s->pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
		elog("tracing pid %d: %d allocator functions in %s", o->pid, s->nfuncs,
		     s->libpath);
		if (s->pidfd < 0 && errno == ESRCH) {
			elog("process %d exited while heapsnoop was attaching", o->pid);
			return -ESRCH;
		}
	}
	return 0;
}

struct session *session__new(const struct options *o)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s) {
		elog("out of memory");
		return NULL;
	}
	s->o = *o;
	s->out = stdout;
	s->pidfd = -1;
	s->child = (struct launch){ .go_fd = -1, .err_fd = -1, .wake_fd = -1,
				    .verbose = o->verbose };
	s->reason = "exit";
	/*
	 * A dump asked for while starting (-a takes seconds) is written once
	 * tracing runs; SIGUSR1's default action would end heapsnoop. SIGINT
	 * and SIGTERM keep theirs until tracing runs: they abort start-up.
	 */
	signal(SIGUSR1, on_usr1);
	if (gate__new(o, &s->gate) || !(s->bg = bgdump__new()) || bpfload__preflight() ||
	    target__allocator(o, s->libpath, sizeof(s->libpath)))
		goto fail;
	/* Opened now, truncated once the command has started. */
	if (o->output && !(s->of = o->append ? outfile__open_append(o->output) :
			   outfile__open(o->output)))
		goto fail;
	if (!o->quiet && isatty(STDERR_FILENO))
		s->tty = stderr;
	if (bpfload__open(o, &s->skel) || start_tracing(s))
		goto fail;
	install_signals();
	if (announce(s))
		goto fail;
	if (s->of && !(s->out = outfile__start(s->of)))
		goto fail;
	return s;
fail:
	session__free(s);
	return NULL;
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
		drain(s);
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
		drain(s);
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
static void reap(struct session *s)
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
	drain(s);
	if (s->o.all)
		reap(s);
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
}

/* Until the target ends or a signal says stop; 0, or 1 on a read error. */
static int loop(struct session *s)
{
	double t0 = now_s();
	int err;

	s->next_status = t0 + 1;
	s->next_dump = s->o.interval ? t0 + s->o.interval : 0;
	for (;;) {
		err = wait_events(s);
		if (err < 0 && err != -EINTR) {
			elog("reading the ring buffer failed: %s", strerror(-err));
			return 1;
		}
		if (target_ended(s) || stop_requested(s))
			return 0;
		periodic(s, now_s());
	}
}

/* --- shutdown ------------------------------------------------------------ */

/* Detached, drained: the last dump, -s, the accounting; the exit status. */
static int finish(struct session *s, int status)
{
	uint64_t lost_maps, lost, untraced;

	/* Detach before writing: the target runs at full speed again. */
	attach__free(s->att);
	s->att = NULL;
	lost_maps = drain_last(s);
	bgdump__reap(s->bg, true);	/* a dump still written: its end */
	if (s->o.all)
		reap(s);
	status__read_counters(s->skel->maps.counters, s->cnt);
	if (report__dump(s->trace, s->out, s->reason)) {
		elog("writing records failed: %s", strerror(errno));
		status = 1;
	}
	if (s->o.summary) {
		struct symbolizer *sym = symbolizer__new(NULL);

		report__summary(s->trace, sym, stderr, s->o.summary);
		symbolizer__free(sym);
	}
	if (outfile__close(s->of))
		status = 1;
	s->of = NULL;
	s->out = stdout;
	lost = status__final(stderr, s->trace, s->cnt);
	if (s->unfollowed)
		elog("%" PRIu64 " processes forked by the traced ones were not traced "
		     "(-f follows them)", s->unfollowed);
	untraced = exec_probe__untraced(s->ep);
	if (untraced)
		elog("IMAGES NOT TRACED: %" PRIu64 " of the images the command exec'd had no "
		     "allocator heapsnoop could probe (said above, each): their allocations are "
		     "not in the records", untraced);
	if (libc_follow__late(s->follow))
		elog("%" PRIu64 " C libraries were probed only once a traced process had mapped "
		     "them, or not at all (said above): what those processes allocated until "
		     "then is missing", libc_follow__late(s->follow));
	if (s->o.verbose) {
		status__unwind(stderr, s->trace);
		if (s->interp)
			interp__stats(s->interp, stderr);
		status__backlog(stderr, s->max_backlog, s->o.ringbuf_mb << 20);
		if (s->skel->rodata->have_free_log)
			status__free_logs(stderr, reader__logged_frees(s->rd),
					  s->cnt[HS_CNT_FREE_LOG_FULL]);
		if (s->cnt[HS_CNT_SPILLED])
			elog("%" PRIu64 " allocator calls kept their state in the LRU hash: "
			     "another thread's call held their thread slot (ids equal modulo "
			     "--thread-slots)", s->cnt[HS_CNT_SPILLED]);
		if (bgdump__longest_ms(s->bg) > 0)
			elog("longest stop of the event loop for a dump: %.1f ms",
			     bgdump__longest_ms(s->bg));
	}
	if (lost_maps)
		elog("MAPPING RECORDS LOST: %" PRIu64 " (the kernel's buffer was full): %s",
		     lost_maps, s->o.all ? "stacks of processes started meanwhile may not symbolize" :
		     "a C library a traced process mapped meanwhile may not have been probed");
	if (s->write_err)
		status = 1;
	if (status)
		return status;
	if (lost || lost_maps || untraced) {
		if (s->launched && !strcmp(s->reason, "exit"))
			elog("exit status %d: %s (the command's own status: %s %d)",
			     SESSION_EXIT_LOST, lost || lost_maps ? "events were lost" :
			     "images were not traced",
			     WIFSIGNALED(s->child_status) ? "signal" : "exit",
			     WIFSIGNALED(s->child_status) ? WTERMSIG(s->child_status) :
			     WEXITSTATUS(s->child_status));
		return SESSION_EXIT_LOST;
	}
	if (s->launched && !strcmp(s->reason, "exit")) {
		if (WIFEXITED(s->child_status))
			return WEXITSTATUS(s->child_status);
		if (WIFSIGNALED(s->child_status))
			return 128 + WTERMSIG(s->child_status);
	}
	return 0;
}

int session__run(struct session *s)
{
	int status = loop(s);

	if (s->tty)
		status__clear(s->tty);
	return gate__finish(s->gate, s->trace, finish(s, status));
}

void session__free(struct session *s)
{
	if (!s)
		return;
	bgdump__free(s->bg);
	if (s->pidfd >= 0)
		close(s->pidfd);
	reader__free(s->rd);
	attach__free(s->att);
	libc_watch__free(s->watch);
	exec_probe__free(s->ep);
	mmaprec__free(s->mr);
	libc_follow__free(s->follow);
	bpf_link__destroy(s->tl.exit);
	bpf_link__destroy(s->tl.exec);
	bpf_link__destroy(s->tl.fork);
	bpf_link__destroy(s->tl.thread_exit);
	interp__free(s->interp);
	heapsnoop_bpf__destroy(s->skel);
	trace__free(s->trace);
	gate__free(s->gate);
	launch_user__free(&s->user);
	outfile__close(s->of);
	free(s);
}

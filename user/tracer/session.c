// SPDX-License-Identifier: MIT
/*
 * session.c - one run of heapsnoop (see session.h), started in the order
 * the data path needs it: the checks, the target, the output file, the
 * BPF side loaded (bpfload.c), the ring buffer and the trace, the command
 * held (launch mode), the tracepoints and probes attached, the command
 * let go; then run (loop.c's event loop, shutdown.c's end, the gates'
 * verdict) and freed.
 * Data flows one way: BPF (bpf/heapsnoop.bpf.c) -> ring buffer
 * (stream/) -> trace (track/, unwind/) -> report (output/) -> records
 * (docs/OUTPUT.md).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/bpfload.h"
#include "attach/detach.h"
#include "attach/execprobe.h"
#include "attach/hold.h"
#include "attach/libcfollow.h"
#include "attach/libcwatch.h"
#include "attach/target.h"
#include "frametab.h"
#include "heapsnoop.skel.h"
#include "interp/interp.h"
#include "interp/reach.h"
#include "msg.h"
#include "outfile.h"
#include "output/bgdump.h"
#include "output/liveview.h"
#include "output/tracegate.h"
#include "output/status.h"
#include "output/ttylog.h"
#include "session.h"
#include "session_int.h"
#include "stream/flow.h"
#include "stream/reader.h"
#include "track/mmaprec.h"
#include "track/trace.h"
#include "unwind/tails.h"

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

/*
 * interp_opts.frame_rename: the frame at @old named as the one at @new is
 * (frametab__rename); on failure it keeps its name, the one it was
 * given then.
 */
static void frame_rename(void *ctx, pid_t pid, uint64_t old, uint64_t new)
{
	struct session *s = ctx;

	frametab__rename(trace__frames(s->trace), (uint32_t)pid, old, new);
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

static uint64_t flow_backlog(void *ctx)
{
	return reader__backlog(((struct session *)ctx)->rd);
}

/* --on-full hold, asked for or by default (-p, a command). */
static bool holds(const struct options *o)
{
	return !o->all && (o->on_full == OPT_ON_FULL_DEFAULT || o->on_full == OPT_ON_FULL_HOLD);
}

/* --on-full sample, asked for or by default (-a). */
static bool sheds(const struct options *o)
{
	return o->on_full == OPT_ON_FULL_SAMPLE || (o->all && o->on_full == OPT_ON_FULL_DEFAULT);
}

static int flow_hold(void *ctx, bool on)
{
	return hold__set(((struct session *)ctx)->hold, on);
}

/*
 * --on-full hold (-p and a command by default): the target in a cgroup of
 * heapsnoop's, made to wait by the freezer at a quarter of the ring
 * buffer (where the programs wake the loop: bpfload.c), let go at a
 * sixteenth (docs/DESIGN.md, "Nothing lost under load"). Without it
 * (no cgroup v2, a read-only one), said, and load is shed as with
 * --on-full sample: allocations recorded as samples past a quarter.
 */
static int start_hold(struct session *s)
{
	const struct options *o = &s->o;
	uint64_t ring = (uint64_t)o->ringbuf_mb << 20;
	char why[PATH_MAX + 128];
	int err;

	if (sheds(o) && o->verbose)
		elog("when heapsnoop falls behind (a backlog of %" PRIu64 " MiB), allocations "
		     "smaller than 1 KiB to 1 MiB, as far behind as it is, are recorded as samples "
		     "that stand for the rest: --on-full sample", ring / 4 >> 20);
	if (!holds(o))
		return 0;
	err = hold__new(o->pid, why, sizeof(why), &s->hold);
	if (!err)
		err = flow__start(&(struct flow_opts){ .high = ring / 4, .low = ring / 16,
						       .ring_fd = reader__poll_fd(s->rd),
						       .backlog = flow_backlog, .hold = flow_hold,
						       .ctx = s }, &s->flow);
	if (err && o->on_full == OPT_ON_FULL_HOLD) {
		elog("--on-full hold: cannot make pid %d wait (%s)", o->pid, why);
		return err;
	}
	if (err) {
		elog("cannot make pid %d wait while heapsnoop catches up (%s): under load, "
		     "allocations are recorded as samples, as with --on-full sample", o->pid, why);
		s->skel->bss->shed_mark = ring / 4;
		return 0;
	}
	if (o->verbose)
		elog("pid %d waits while heapsnoop catches up (a backlog of %" PRIu64 " MiB, "
		     "until %" PRIu64 " MiB): --on-full hold", o->pid, ring / 4 >> 20,
		     ring / 16 >> 20);
	return 0;
}

/*
 * --unwind-threads, or one per CPU but two (the loop's, and one left to
 * the traced program: on 2 CPUs a thread of the pool only took the loop's
 * CPU, 0.83x its records a second, bench/pool.sh), up to 16.
 */
static unsigned int unwind_threads(const struct options *o)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN) - 2;

	if (o->unwind_threads >= 0)
		return (unsigned int)o->unwind_threads;
	return n < 0 ? 0 : n > 16 ? 16 : (unsigned int)n;
}

/*
 * The trace, the command held (launch mode), the probes, the ring buffer.
 * Returns 0 or -errno, said; a held command is ended on failure.
 */
static int start_tracing(struct session *s)
{
	struct options *o = &s->o;
	unsigned int threads = o->unwind_fp ? 0 : unwind_threads(o);
	int err;

	/* Before the first /proc maps read, which notes the producer's position. */
	err = reader__open(bpf_map__fd(s->skel->maps.events), o->ringbuf_mb << 20,
			   s->skel->rodata->have_free_log ? bpf_map__fd(s->skel->maps.free_logs) : -1,
			   bpf_map__max_entries(s->skel->maps.free_logs),
			   &(struct reader_opts){ .fn = session__on_record,
						  .ahead = threads ? session__on_ahead : NULL,
						  .flow = session__on_backlog, .ctx = s }, &s->rd);
	if (err) {
		elog("cannot map the ring buffer or the free logs: %s", strerror(-err));
		return err;
	}
	if (o->interp && !o->all) {
		s->interp = interp__new(&(struct interp_opts){
			.skel = s->skel, .python = o->interp & OPT_INTERP_PYTHON,
			.lua = o->interp & OPT_INTERP_LUA,
			.follow_forks = o->follow_forks, .verbose = o->verbose,
			.peek = ring_peek, .head = session__ring_head, .frame_addr = frame_addr,
			.frame_rename = frame_rename,
			.ctx = s });
		if (!s->interp) {
			elog("out of memory");
			return -ENOMEM;
		}
	}
	/* Deep stacks copied once (bpf/tail.h): where the kernel lets the programs. */
	if (s->skel->rodata->have_tails &&
	    (err = tails__open(bpf_map__fd(s->skel->maps.tails), session__ring_head, s,
			       &s->tails))) {
		elog("cannot map the stack tails: %s", strerror(-err));
		return err;
	}
	pace__init(&s->pace, o->ringbuf_mb << 20, 1, SESSION_POLL_MS);
	pace__init(&s->log_pace, HS_FREE_LOG_ENTRIES, 1, SESSION_POLL_MS);
	s->timeout_ms = SESSION_POLL_MS;
	s->trace = trace__new(&(struct trace_opts){ .snip_pre = o->snip_pre,
						    .snip_post = o->snip_post,
						    .map_records = o->all,
						    .unwind = !o->unwind_fp,
						    .unwind_threads = threads,
						    .tails = s->tails,
						    .no_jit_names = o->no_perf_map,
						    .keep_stacks = (uint64_t)o->keep_stacks_mb << 20,
						    .sample_bytes = o->sample_bytes,
						    .on_exit = o->leaks_at_exit || s->gate ?
							       session__on_proc_exit : NULL,
						    .sync_maps = session__sync_maps,
						    .ring_head = session__ring_head,
						    .ctx = s,
						    .interp_record = s->interp ? interp_record : NULL,
						    .interp_splice = s->interp ? interp_splice : NULL,
						    .interp_grab = s->interp ? interp_grab : NULL,
						    .ictx = s->interp });
	if (!s->trace) {
		elog("out of memory");
		return -ENOMEM;
	}
	if (o->keep_stacks_mb)
		elog("--keep-stacks: each dump keeps its live blocks' registers and stack bytes "
		     "(ustack records), %lu MiB of them held at most; no stack tails", o->keep_stacks_mb);
	if (o->argv) {
		/* Each runtime's environment for the command (its row's: CPython's PYTHONMALLOC). */
		err = interp__command_env(&(struct interp_opts){ .python = o->interp & OPT_INTERP_PYTHON,
								 .lua = o->interp & OPT_INTERP_LUA,
								 .verbose = o->verbose },
					  o->argv[0]);
		if (err)
			return err;
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
	err = start_hold(s);
	if (err)
		goto abort;
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
	/*
	 * Also before them: a thread made before its creation is seen has no
	 * creator (its stacks end where it started). Not fatal: said.
	 */
	if (bpf_program__autoload(s->skel->progs.thread_fork)) {
		s->tl.thread_fork = bpf_program__attach(s->skel->progs.thread_fork);
		if (!s->tl.thread_fork)
			elog("cannot attach to the sched_process_fork tracepoint for threads' "
			     "creators: %s; creator stacks are not kept", strerror(errno));
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

/*
 * Launch mode with the default --interp: no interpreter's walk loaded
 * where the command can run no interpreter (interp/reach.h), which is
 * most of the programs' verification at start-up. -v says which.
 */
static void drop_idle_walkers(struct session *s)
{
	char path[PATH_MAX], why[96];

	if (!s->o.argv || !s->o.interp || s->o.interp_asked ||
	    launch__resolve(s->o.argv[0], path, sizeof(path)))
		return;
	if (interp_reach__may_run(path, why, sizeof(why))) {
		if (s->o.verbose)
			elog("interpreter frames: walkers loaded: %s may run an interpreter (%s)",
			     path, why);
		return;
	}
	s->o.interp = 0;
	if (s->o.verbose)
		elog("interpreter frames: no walker loaded: %s can run no interpreter (it "
		     "imports no exec, spawn or dlopen, needs only the C and C++ runtimes); "
		     "--interp python,lua loads them all the same", path);
}

/* The BPF side loaded, set for what @s traces and how (bpfload.h). */
static int load_bpf(struct session *s)
{
	const struct options *o = &s->o;
	struct bpfload_opts bo = {
		.verbose = o->verbose, .without = o->without,
		.all = o->all, .follow_forks = o->follow_forks,
		.dwarf = !o->unwind_fp, .stack_copy = o->stack_copy,
		.max_frames = trace_max_frames(o->snip_pre, o->snip_post, true),
		.fallback_frames = trace_fallback_frames(o->snip_pre, o->snip_post),
		.ringbuf_bytes = o->ringbuf_mb << 20, .thread_slots = o->thread_slots,
		.hold = holds(o), .shed = sheds(o),
		.tails = !o->no_tails,
		.empty_probes = o->empty_probes, .empty_read = o->empty_read,
		.comm = o->comm, .uid = o->uid, .pids = o->pids, .npids = o->npids,
		.min_size = o->min_size, .max_size = o->max_size,
		.sample_bytes = o->sample_bytes, .interp = o->interp != 0,
	};

	return bpfload__open(&bo, &s->skel);
}

struct session *session__new(const struct options *o)
{
	struct session *s = calloc(1, sizeof(*s));
	struct summary_opts so = { !o->gate.no_default_supp, o->output, o->full_stacks };

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
	session__catch_dump();
	if (gate__new(&o->gate, &s->gate) || !(s->bg = bgdump__new(&so)) || bpfload__preflight() ||
	    target__allocator(o->all, o->pid, o->allocator, s->libpath, sizeof(s->libpath)))
		goto fail;
	/* Opened now, truncated once the command has started. */
	if (o->output && !(s->of = o->append ? outfile__open_append(o->output) :
			   outfile__open(o->output)))
		goto fail;
	/* A *.zst log is written zstd-compressed (docs/OUTPUT.md). */
	if (s->of && outfile__zstd_name(o->output))
		outfile__compress(s->of);
	/* --top draws on standard error: the status line would cross it. */
	if (o->top && !isatty(STDERR_FILENO)) {
		elog("--top draws on a terminal: standard error is not one");
		goto fail;
	}
	/* No -o, a terminal on standard output: a log of its own, and -s. */
	if (ttylog__wanted(o->output)) {
		s->of = ttylog__create(o->argv, o->all ? 0 : o->pid, s->logpath,
				       sizeof(s->logpath));
		if (!s->of)
			goto fail;
		elog("writing the records to %s (standard output is a terminal; -o FILE or a "
		     "pipe takes them instead)", s->logpath);
		if (!s->o.summary)
			s->o.summary = 10;
	}
	if (!o->quiet && !o->top && isatty(STDERR_FILENO))
		s->tty = stderr;
	drop_idle_walkers(s);
	if (load_bpf(s) || start_tracing(s))
		goto fail;
	session__catch_stop();
	if (announce(s))
		goto fail;
	if (s->of && !(s->out = outfile__start(s->of)))
		goto fail;
	return s;
fail:
	session__free(s);
	return NULL;
}

int session__run(struct session *s)
{
	int status = session__loop(s);

	if (s->tty)
		status__clear(s->tty);
	return gate__finish(s->gate, s->trace, session__finish(s, status));
}

void session__detach_tasks(struct session *s, struct link_batch *b)
{
	link_batch__add(b, s->tl.exit);
	link_batch__add(b, s->tl.exec);
	link_batch__add(b, s->tl.fork);
	link_batch__add(b, s->tl.thread_exit);
	link_batch__add(b, s->tl.thread_fork);
	s->tl = (struct task_links){ 0 };
}

void session__set_agent(struct session *s, struct agent *a)
{
	s->agent = a;
}

void session__free(struct session *s)
{
	struct link_batch *b;

	if (!s)
		return;
	liveview__free(s->lv);
	bgdump__free(s->bg);
	flow__stop(s->flow);
	hold__free(s->hold);
	if (s->pidfd >= 0)
		close(s->pidfd);
	reader__free(s->rd);
	/* Whatever is still attached (start-up failed, or -p --allocator), at once. */
	b = link_batch__new();
	attach__detach(s->att, b);
	exec_probe__free(s->ep);
	mmaprec__free(s->mr);	/* before the watcher it calls */
	libc_watch__free(s->watch, b);
	libc_follow__free(s->follow);
	session__detach_tasks(s, b);
	link_batch__destroy(b);
	interp__free(s->interp);
	heapsnoop_bpf__destroy(s->skel);
	trace__free(s->trace);
	tails__free(s->tails);	/* after the jobs that read them */
	gate__free(s->gate);
	launch_user__free(&s->user);
	outfile__close(s->of);
	free(s);
}

// SPDX-License-Identifier: MIT
/*
 * heapsnoop - trace the heap of a running process or of a command, and
 * write every live (outstanding) allocation as a `~m#` record with the
 * stack that made it. Data flows one way: BPF (bpf/heapsnoop.bpf.c) ->
 * ring buffer -> trace.c (tracker, stacks, maps) -> report.c -> output.
 *
 * Line grammar of the output: docs/OUTPUT.md.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "elfsym.h"
#include "heapsnoop.skel.h"
#include "launch.h"
#include "mmaprec.h"
#include "procmaps.h"
#include "report.h"
#include "status.h"
#include "symbolizer.h"
#include "syswide.h"
#include "trace.h"
#include "version.h"

static const char usage_text[] =
"Usage: heapsnoop [OPTION]... -p PID\n"
"       heapsnoop [OPTION]... -- COMMAND [ARG]...\n"
"       heapsnoop [OPTION]... -a\n"
"Trace the heap of a running process (-p), of COMMAND, started held so\n"
"that its first allocation is traced, or of every process (-a). When the\n"
"process exits, on SIGINT or SIGTERM, write every live allocation as one\n"
"line with its pid, address and a `~m#` record of its size and stack\n"
"(innermost frame first), after `map` records of the process's executable\n"
"mappings; `heapdecode` turns them into `~b#` lines and symbolizes them on\n"
"any machine.\n"
"\n"
"  -p, --pid PID          trace the running process PID\n"
"  -a, --all              trace every process that uses a C library, those\n"
"                         started later and those of other mount namespaces\n"
"                         (containers) included\n"
"      --leaks-at-exit    -a: when a process exits, write its live\n"
"                         allocations (an `exit` section); default: drop them\n"
"      --comm NAME        only processes named NAME (as `ps -o comm`)\n"
"      --pid-filter PID[,PID]...  only these processes (-a)\n"
"      --uid UID          only processes of user UID\n"
"      --min-size BYTES   only allocations of at least BYTES\n"
"      --max-size BYTES   only allocations of at most BYTES\n"
"  -o, --output FILE      write records to FILE (default: standard output)\n"
"  -i, --interval SECS    also write the live set every SECS seconds\n"
"  -s, --summary[=N]      at the end, print the N (10) stacks holding the\n"
"                         most live bytes, symbolized, to standard error\n"
"      --allocator PATH   probe the allocator in PATH (jemalloc, tcmalloc,\n"
"                         mimalloc, or a static binary's own malloc) instead\n"
"                         of the C library the process maps\n"
"      --unwind fp|dwarf  how stacks are walked: dwarf (default) unwinds by\n"
"                         each module's CFI (.eh_frame), so code built\n"
"                         without frame pointers (Debian's) has complete\n"
"                         stacks; fp follows %rbp in BPF (less loader CPU),\n"
"                         complete only where every frame keeps %rbp\n"
"      --stack-copy BYTES dwarf: the most stack copied per allocation, a\n"
"                         power of two from 512 to 65536 (default 16384);\n"
"                         deeper stacks are cut and counted as truncated\n"
"      --snip-pre N       drop the N innermost frames of every stack\n"
"      --snip-post N      drop the N outermost frames of complete stacks\n"
"      --ringbuf-size MB  BPF ring buffer size in MiB (default 64)\n"
"      --empty-probes     attach probes that do nothing (benchmark floor)\n"
"  -q, --quiet            no live status line on a terminal\n"
"  -v, --verbose          say where each probe goes and why, how stacks were\n"
"                         unwound and the tables' memory; libbpf details\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"Signals: SIGUSR1 writes the live set without stopping.\n"
"Needs root, or CAP_BPF and CAP_PERFMON (and CAP_SYS_PTRACE for -p and -a).\n"
"\n"
"Examples:\n"
"  heapsnoop -s -- ./server --port 8080 | heapdecode\n"
"  heapsnoop -p $(pidof server) -i 60 -o heap.log\n"
"  heapsnoop -a --leaks-at-exit -s -o all.heap\n"
"\n"
"Exit status: the command's, in launch mode; otherwise 0; 1 on error.\n";

/* Longest an event waits in the ring buffer when no wakeup comes, ms. */
#define POLL_MS 10

struct options {
	pid_t pid;
	char **argv;		/* launch mode: the command */
	const char *output;
	const char *allocator;
	unsigned int interval;	/* seconds, 0: none */
	unsigned int summary;	/* top N, 0: none */
	unsigned int snip_pre, snip_post;
	unsigned long ringbuf_mb;
	bool verbose, quiet, empty_probes;
	bool unwind_fp;		/* --unwind fp; default dwarf */
	unsigned int stack_copy;	/* --stack-copy bytes */
	/* -a and the filters */
	bool all, leaks_at_exit;
	const char *comm;
	uint32_t pids[64];
	unsigned int npids;
	long uid;		/* -1: any */
	uint64_t min_size, max_size;
};

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

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static __attribute__((format(printf, 1, 2))) void die_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("heapsnoop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int parse_uint(const char *s, const char *what, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > max) {
		die_msg("invalid %s '%s' (expected a whole number up to %lu)", what, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_ALLOCATOR = 256, OPT_SNIP_PRE, OPT_SNIP_POST, OPT_RINGBUF, OPT_EMPTY,
	       OPT_LEAKS_AT_EXIT, OPT_COMM, OPT_PID_FILTER, OPT_UID, OPT_MIN_SIZE, OPT_MAX_SIZE,
	       OPT_UNWIND, OPT_STACK_COPY };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "leaks-at-exit", no_argument, NULL, OPT_LEAKS_AT_EXIT },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "pid-filter", required_argument, NULL, OPT_PID_FILTER },
		{ "uid", required_argument, NULL, OPT_UID },
		{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "summary", optional_argument, NULL, 's' },
		{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "stack-copy", required_argument, NULL, OPT_STACK_COPY },
		{ "snip-pre", required_argument, NULL, OPT_SNIP_PRE },
		{ "snip-post", required_argument, NULL, OPT_SNIP_POST },
		{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
		{ "empty-probes", no_argument, NULL, OPT_EMPTY },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	unsigned long v;
	int c;

	o->ringbuf_mb = 64;
	o->stack_copy = HS_USER_STACK_DEFAULT;
	o->uid = -1;
	o->max_size = UINT64_MAX;
	while ((c = getopt_long(argc, argv, "+p:ao:i:s::qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = true;
			break;
		case OPT_LEAKS_AT_EXIT:
			o->leaks_at_exit = true;
			break;
		case OPT_COMM:
			if (!*optarg || strlen(optarg) > 15) {
				die_msg("--comm '%s': a process name has 1 to 15 characters (the kernel "
					"keeps no more; see /proc/PID/comm)", optarg);
				return -EINVAL;
			}
			o->comm = optarg;
			break;
		case OPT_PID_FILTER:
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				if (parse_uint(tok, "pid", INT_MAX, &v) || !v)
					return -EINVAL;
				if (o->npids == sizeof(o->pids) / sizeof(o->pids[0])) {
					die_msg("--pid-filter: at most %zu pids",
						sizeof(o->pids) / sizeof(o->pids[0]));
					return -EINVAL;
				}
				o->pids[o->npids++] = (uint32_t)v;
			}
			break;
		case OPT_UID:
			if (parse_uint(optarg, "uid", UINT32_MAX - 1, &v))
				return -EINVAL;
			o->uid = (long)v;
			break;
		case OPT_MIN_SIZE:
		case OPT_MAX_SIZE:
			if (parse_uint(optarg, "size", ULONG_MAX, &v))
				return -EINVAL;
			*(c == OPT_MIN_SIZE ? &o->min_size : &o->max_size) = v;
			break;
		case 'p':
			if (parse_uint(optarg, "pid", INT_MAX, &v) || !v)
				return -EINVAL;
			o->pid = (pid_t)v;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'i':
			if (parse_uint(optarg, "interval", 86400 * 365, &v) || !v)
				return -EINVAL;
			o->interval = (unsigned int)v;
			break;
		case 's':
			o->summary = 10;
			if (optarg && (parse_uint(optarg, "summary count", 100000, &v) || !v))
				return -EINVAL;
			if (optarg)
				o->summary = (unsigned int)v;
			break;
		case OPT_ALLOCATOR:
			o->allocator = optarg;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "fp") && strcmp(optarg, "dwarf")) {
				die_msg("--unwind '%s': give fp (frame pointers) or dwarf (CFI)",
					optarg);
				return -EINVAL;
			}
			o->unwind_fp = !strcmp(optarg, "fp");
			break;
		case OPT_STACK_COPY:
			if (parse_uint(optarg, "stack copy size", HS_USER_STACK_MAX, &v))
				return -EINVAL;
			if (v < HS_USER_STACK_MIN || (v & (v - 1))) {
				die_msg("--stack-copy must be a power of two from %d to %d (bytes)",
					HS_USER_STACK_MIN, HS_USER_STACK_MAX);
				return -EINVAL;
			}
			o->stack_copy = (unsigned int)v;
			break;
		case OPT_SNIP_PRE:
		case OPT_SNIP_POST:
			if (parse_uint(optarg, "frame count", HS_BPF_MAX_FRAMES - HS_MAX_DEPTH, &v))
				return -EINVAL;
			*(c == OPT_SNIP_PRE ? &o->snip_pre : &o->snip_post) = (unsigned int)v;
			break;
		case OPT_RINGBUF:
			if (parse_uint(optarg, "ring buffer size", 4096, &v))
				return -EINVAL;
			if (!v || (v & (v - 1))) {
				die_msg("--ringbuf-size must be a power of two (MiB)");
				return -EINVAL;
			}
			o->ringbuf_mb = v;
			break;
		case OPT_EMPTY:
			o->empty_probes = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			printf("heapsnoop %s\n", HEAPSNOOP_VERSION);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (!!o->pid + !!o->argv + o->all != 1) {
		die_msg(!o->pid && !o->argv && !o->all ?
			"nothing to trace: give -p PID, -a or -- COMMAND" :
			"give one of -p PID, -a or a command, not several");
		return -EINVAL;
	}
	if (o->leaks_at_exit && !o->all) {
		die_msg("--leaks-at-exit goes with -a (with -p or a command, the live set "
			"at the process's exit is the final dump)");
		return -EINVAL;
	}
	if (o->min_size > o->max_size) {
		die_msg("--min-size %" PRIu64 " is above --max-size %" PRIu64 ": nothing would "
			"be traced", o->min_size, o->max_size);
		return -EINVAL;
	}
	return 0;
}

/* Say what is missing in the kernel or in our privileges, before libbpf. */
static int preflight(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		die_msg("this kernel has no BTF (/sys/kernel/btf/vmlinux): heapsnoop needs a "
			"kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		die_msg("this kernel has no uprobe support: heapsnoop needs "
			"CONFIG_UPROBE_EVENTS=y");
		return -ENOTSUP;
	}
	return 0;
}

static void explain_load_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		die_msg("not allowed to load BPF programs: run as root, or give heapsnoop "
			"CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep)");
	else
		die_msg("cannot load the BPF programs: %s (rerun with -v for the verifier log)",
			strerror(-err));
}

/* Our own C library: what a launched dynamic program will map too. */
static int self_libc(char *path, size_t cap)
{
	int err = proc_maps__find_libc(getpid(), path, cap);

	if (err)
		die_msg("cannot find the C library heapsnoop itself uses");
	return err;
}

/* A static command has no libc to probe: say what to do instead. */
static int check_command(const char *path, const char *allocator)
{
	struct elf_file *ef;
	bool dynamic;

	if (allocator || elf_file__open(path, &ef))
		return 0;	/* scripts are fine: their interpreter is dynamic */
	dynamic = elf_file__is_dynamic(ef);
	elf_file__close(ef);
	if (!dynamic) {
		die_msg("%s is statically linked: it maps no C library to probe; trace its own "
			"malloc with --allocator %s", path, path);
		return -ENOEXEC;
	}
	return 0;
}

struct loop_ctx {
	struct ring_buffer *rb;
	struct trace *trace;
	struct mmaprec *mr;	/* -a: the kernel's mapping records */
	FILE *out;
	pid_t pid;
	int write_err;
};

static int on_event(void *ctx, void *data, size_t len)
{
	struct loop_ctx *lc = ctx;
	const struct hs_event *ev = data;

	/* Every mapping record of an exiting process is in: apply them first. */
	if (lc->mr && len >= HS_EVENT_HDR_SIZE && ev->type == HS_EV_EXIT)
		mmaprec__drain(lc->mr);
	return trace__event(lc->trace, data, len);
}

/* --leaks-at-exit: a process ended with live allocations. */
static void on_proc_exit(struct proc *p, void *ctx)
{
	struct loop_ctx *lc = ctx;

	if (report__exit(p, lc->out) && !lc->write_err) {
		lc->write_err = -EIO;
		die_msg("writing records failed: %s", strerror(errno));
	}
}

/* The filters and sizes the BPF side reads, before load. */
static void set_rodata(struct heapsnoop_bpf *skel, const struct options *o)
{
	skel->rodata->self_tgid = (__u32)getpid();
	skel->rodata->empty_probes = o->empty_probes;
	skel->rodata->unwind_dwarf = !o->unwind_fp;
	skel->rodata->stack_copy = o->stack_copy;
	skel->rodata->max_frames = trace_max_frames(o->snip_pre, o->snip_post);
	bpf_map__set_max_entries(skel->maps.events, (__u32)(o->ringbuf_mb << 20));
	/* Woken at 1/16 full; a 10 ms poll (POLL_MS) collects the rest. */
	skel->rodata->wakeup_bytes = (o->ringbuf_mb << 20) / 16;
	skel->rodata->filter_comm = o->comm != NULL;
	if (o->comm)
		memcpy((char *)skel->rodata->comm, o->comm, strlen(o->comm));
	skel->rodata->filter_uid = o->uid < 0 ? (__u32)-1 : (__u32)o->uid;
	skel->rodata->filter_pids = o->npids > 0;
	skel->rodata->min_size = o->min_size;
	skel->rodata->max_size = o->max_size;
	if (!o->all) {
		bpf_program__set_autoload(skel->progs.task_exit, false);
		bpf_program__set_autoload(skel->progs.task_exec, false);
	}
}

static int fill_pid_filter(struct heapsnoop_bpf *skel, const struct options *o)
{
	__u8 one = 1;

	for (unsigned int i = 0; i < o->npids; i++) {
		if (bpf_map__update_elem(skel->maps.pid_filter, &o->pids[i], sizeof(o->pids[i]),
					 &one, sizeof(one), BPF_ANY)) {
			die_msg("cannot set up --pid-filter: %s", strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* Links of system-wide mode: process exits and execs. */
struct task_links {
	struct bpf_link *exit, *exec;
};

/*
 * -a: mapping records first (nothing mapped from now on is missed), then
 * process exits/execs, then one set of probes per C library (or the one
 * --allocator names). Returns 0 or -errno, said on stderr.
 */
static int start_syswide(struct heapsnoop_bpf *skel, const struct options *o, struct trace *trace,
			 struct libc_watch **watch, struct mmaprec **mr, struct task_links *tl,
			 struct attachment **att)
{
	struct mmaprec_opts mo = { .trace = trace };
	int err;

	if (!o->allocator) {
		*watch = libc_watch__new(skel, o->verbose);
		if (!*watch)
			return -ENOMEM;
		mo.on_file = libc_watch__on_file;
		mo.ctx = *watch;
	}
	err = mmaprec__new(skel->maps.mmap_records, 256, &mo, mr);
	if (err) {
		die_msg("cannot read the kernel's mapping records (perf_event_open): %s%s",
			strerror(-err), err == -EACCES || err == -EPERM ?
			" (run as root, or with CAP_PERFMON)" : "");
		return err;
	}
	tl->exit = bpf_program__attach(skel->progs.task_exit);
	tl->exec = tl->exit ? bpf_program__attach(skel->progs.task_exec) : NULL;
	if (!tl->exec) {
		err = -errno;
		die_msg("cannot attach to the sched_process_exit/exec tracepoints: %s",
			strerror(-err));
		return err;
	}
	if (o->allocator)
		return attach__allocator(skel, o->allocator, -1, o->verbose, att);
	err = libc_watch__scan(*watch);
	if (err < 0) {
		die_msg("no process maps a C library heapsnoop could probe");
		return err;
	}
	return 0;
}

/* The child's exit stop: every event it sent is in; read its maps last. */
static void at_child_exit(void *arg)
{
	struct loop_ctx *lc = arg;

	ring_buffer__consume(lc->rb);
	trace__refresh_maps(lc->trace, lc->pid);
}

/*
 * Everything waiting: mapping records, then events (a process's mmap and
 * exec precede its allocations). Returns ring_buffer__consume()'s result.
 */
static int drain(struct loop_ctx *lc)
{
	if (lc->mr)
		mmaprec__drain(lc->mr);
	return ring_buffer__consume(lc->rb);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct heapsnoop_bpf *skel = NULL;
	struct attachment *att = NULL;
	struct ring_buffer *rb = NULL;
	struct trace *trace = NULL;
	struct launch child = { .go_fd = -1, .err_fd = -1 };
	struct libc_watch *watch = NULL;
	struct mmaprec *mr = NULL;
	struct task_links tl = { 0 };
	struct loop_ctx lc = { 0 };
	struct symbolizer *sym = NULL;	/* -s: kept across periodic summaries */
	uint64_t cnt[HS_CNT__MAX] = { 0 };
	char libpath[PATH_MAX], cmdpath[PATH_MAX];
	const char *reason = "exit";
	FILE *out = stdout, *tty = NULL;
	bool launched = false, forwarded = false;
	int err, status = 0, child_status = 0, pidfd = -1;
	double next_status, next_dump, t0;
	uint64_t last_events = 0, lost_maps = 0;

	if (parse_args(argc, argv, &o)) {
		fputs("Try 'heapsnoop --help' for more information.\n", stderr);
		return 1;
	}
	verbose_libbpf = o.verbose;
	libbpf_set_print(libbpf_print);
	if (preflight())
		return 1;

	/* Which allocator file to probe, as reachable from here. */
	if (o.all) {
		libpath[0] = '\0';	/* each C library found, or --allocator */
		if (o.allocator && access(o.allocator, R_OK)) {
			die_msg("cannot read %s: %s", o.allocator, strerror(errno));
			return 1;
		}
	} else if (o.allocator) {
		snprintf(libpath, sizeof(libpath), "%s", o.allocator);
		if (access(libpath, R_OK) && o.pid)
			snprintf(libpath, sizeof(libpath), "/proc/%d/root%s", o.pid, o.allocator);
	} else if (o.pid) {
		err = proc_maps__find_libc(o.pid, libpath, sizeof(libpath));
		if (err == -ESRCH) {
			die_msg("no process with pid %d", o.pid);
			return 1;
		}
		if (err == -EACCES) {
			die_msg("cannot read /proc/%d/maps: permission denied (run as root)", o.pid);
			return 1;
		}
		if (err) {
			die_msg("process %d maps no C library (statically linked?): probe its own "
				"malloc with --allocator /proc/%d/exe", o.pid, o.pid);
			return 1;
		}
	} else if (self_libc(libpath, sizeof(libpath))) {
		return 1;
	}

	if (o.output) {
		out = fopen(o.output, "we");
		if (!out) {
			die_msg("cannot open %s for writing: %s", o.output, strerror(errno));
			return 1;
		}
	}
	if (!o.quiet && isatty(STDERR_FILENO))
		tty = stderr;

	skel = heapsnoop_bpf__open();
	if (!skel) {
		die_msg("cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	set_rodata(skel, &o);
	err = heapsnoop_bpf__load(skel);
	if (err) {
		explain_load_error(err);
		goto fail;
	}
	if (fill_pid_filter(skel, &o))
		goto fail;

	lc.out = out;
	trace = trace__new(&(struct trace_opts){ .snip_pre = o.snip_pre,
						 .snip_post = o.snip_post,
						 .map_records = o.all,
						 .unwind = !o.unwind_fp,
						 .on_exit = o.leaks_at_exit ? on_proc_exit : NULL,
						 .ctx = &lc });
	lc.trace = trace;
	if (!trace) {
		die_msg("out of memory");
		goto fail;
	}

	if (o.argv) {
		err = launch__prepare(o.argv, cmdpath, sizeof(cmdpath), &child);
		if (err) {
			die_msg("cannot run %s: %s", o.argv[0], strerror(-err));
			goto fail;
		}
		launched = true;
		if (check_command(cmdpath, o.allocator)) {
			launch__abort(&child);
			goto fail;
		}
		o.pid = child.pid;
	}

	if (o.all)
		err = start_syswide(skel, &o, trace, &watch, &mr, &tl, &att);
	else
		err = attach__allocator(skel, libpath, o.pid, o.verbose, &att);
	lc.mr = mr;
	skel->bss->armed = true;
	if (err) {
		if (err == -ESRCH)
			die_msg("process %d exited while heapsnoop was attaching", o.pid);
		if (launched)
			launch__abort(&child);
		goto fail;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &lc, NULL);
	lc.rb = rb;
	if (!rb) {
		die_msg("cannot set up the ring buffer: %s", strerror(errno));
		if (launched)
			launch__abort(&child);
		goto fail;
	}

	{
		struct sigaction sa = { .sa_sigaction = on_stop, .sa_flags = SA_SIGINFO };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	signal(SIGUSR1, on_usr1);
	signal(SIGPIPE, SIG_IGN);

	if (o.all) {
		fprintf(stderr, "heapsnoop: tracing all processes: %d C librar%s probed%s\n",
			watch ? libc_watch__count(watch) : 1,
			watch && libc_watch__count(watch) == 1 ? "y" : "ies",
			o.comm || o.npids || o.uid >= 0 ? " (filtered)" : "");
	} else if (launched) {
		fprintf(stderr, "heapsnoop: tracing %s (pid %d): %d allocator functions in %s\n",
			cmdpath, o.pid, attach__count(att), libpath);
		err = launch__go(&child);
		if (err) {
			die_msg("cannot run %s: %s", cmdpath, strerror(-err));
			goto fail;
		}
	} else {
		trace__add_proc(trace, o.pid);
		pidfd = (int)syscall(SYS_pidfd_open, o.pid, 0);
		fprintf(stderr, "heapsnoop: tracing pid %d: %d allocator functions in %s\n",
			o.pid, attach__count(att), libpath);
		if (pidfd < 0 && errno == ESRCH) {
			die_msg("process %d exited while heapsnoop was attaching", o.pid);
			goto fail;
		}
	}
	fflush(stderr);

	lc.pid = o.pid;
	t0 = now_s();
	next_status = t0 + 1;
	next_dump = o.interval ? t0 + o.interval : 0;
	for (;;) {
		bool done = false;
		double now;

		if (mr) {
			/* Wait for events without taking them: records go first. */
			struct pollfd pfd = { .fd = ring_buffer__epoll_fd(rb), .events = POLLIN };

			poll(&pfd, 1, POLL_MS);
			err = drain(&lc);
		} else {
			err = ring_buffer__poll(rb, POLL_MS);
		}
		if (err < 0 && err != -EINTR) {
			die_msg("reading the ring buffer failed: %s", strerror(-err));
			status = 1;
			break;
		}
		if (launched) {
			done = launch__poll(&child, at_child_exit, &lc, &child_status);
		} else if (pidfd_exited(pidfd)) {
			done = true;
		}
		if (done) {
			drain(&lc);
			trace__proc_gone(trace, o.pid);
			break;
		}
		/*
		 * Launch mode: the first SIGINT/SIGTERM ends the command (passed
		 * on unless the terminal sent it to the command already) and
		 * tracing goes on to its exit; a second one stops at once.
		 */
		if (stop_signal && launched && stop_count == 1 && !forwarded) {
			forwarded = true;
			if (!stop_from_tty)
				kill(child.pid, stop_signal);
		} else if (stop_signal && (!launched || stop_count > 1)) {
			drain(&lc);
			reason = "signal";
			break;
		}
		now = now_s();
		if (dump_requested || (next_dump && now >= next_dump)) {
			drain(&lc);
			if (report__dump(trace, out, dump_requested ? "usr1" : "interval"))
				die_msg("writing records failed: %s", strerror(errno));
			if (o.all && o.summary) {
				if (!sym)
					sym = symbolizer__new(NULL);
				report__summary(trace, sym, stderr, o.summary);
			}
			if (next_dump && now >= next_dump)
				next_dump = now + o.interval;
			dump_requested = 0;
		}
		if (tty && now >= next_status) {
			const struct trace_stats *s = trace__stats(trace);
			uint64_t ev = s->allocs + s->frees;

			status__read_counters(skel->maps.counters, cnt);
			status__line(tty, trace, cnt, (double)(ev - last_events) / (now - next_status + 1));
			last_events = ev;
			next_status = now + 1;
		}
	}
	if (tty)
		status__clear(tty);

	/* Detach before writing: the target runs at full speed again. */
	attach__free(att);
	att = NULL;
	drain(&lc);
	lost_maps = mr ? mmaprec__lost(mr) : 0;
	mmaprec__free(mr);	/* before the watcher it calls */
	lc.mr = mr = NULL;
	libc_watch__free(watch);
	watch = NULL;
	ring_buffer__consume(rb);
	status__read_counters(skel->maps.counters, cnt);
	if (report__dump(trace, out, reason)) {
		die_msg("writing records failed: %s", strerror(errno));
		status = 1;
	}
	if (o.summary) {
		if (!sym)
			sym = symbolizer__new(NULL);
		report__summary(trace, sym, stderr, o.summary);
	}
	status__final(stderr, trace, cnt);
	if (o.verbose)
		status__unwind(stderr, trace);
	if (lost_maps)
		fprintf(stderr, "heapsnoop: MAPPING RECORDS LOST: %" PRIu64 " (the kernel's buffer "
			"was full): stacks of processes started meanwhile may not symbolize\n",
			lost_maps);
	if (lc.write_err)
		status = 1;

	if (launched && !strcmp(reason, "exit")) {
		if (WIFEXITED(child_status))
			status = status ? status : WEXITSTATUS(child_status);
		else if (WIFSIGNALED(child_status))
			status = 128 + WTERMSIG(child_status);
	}
	goto cleanup;
fail:
	status = 1;
cleanup:
	if (pidfd >= 0)
		close(pidfd);
	ring_buffer__free(rb);
	attach__free(att);
	libc_watch__free(watch);
	mmaprec__free(mr);
	bpf_link__destroy(tl.exit);
	bpf_link__destroy(tl.exec);
	heapsnoop_bpf__destroy(skel);
	trace__free(trace);
	symbolizer__free(sym);
	if (out && out != stdout)
		fclose(out);
	return status;
}

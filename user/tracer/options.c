// SPDX-License-Identifier: MIT
/*
 * options.c - heapsnoop's usage text and option parsing (see options.h).
 * Each option's check lives next to its parsing; the checks across
 * options (one target, --leaks-at-exit with -a, sizes) in validate().
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/kfeatures.h"
#include "heapsnoop/codec.h"
#include "heapsnoop/event.h"
#include "msg.h"
#include "outfile.h"
#include "options.h"
#include "version.h"

static const char usage_text[] =
"Usage: heapsnoop [OPTION]... -p PID\n"
"  or:  heapsnoop [OPTION]... [-u USER] -- COMMAND [ARG]...\n"
"  or:  heapsnoop [OPTION]... -a\n"
"  or:  heapsnoop agent [--listen ADDR:PORT] [OPTION]...   (heapsnoop agent --help)\n"
"Trace the heap of a running process (-p), of COMMAND, started held so\n"
"that its first allocation is traced, or of every process (-a). When the\n"
"process exits, on SIGINT or SIGTERM, write every live allocation as one\n"
"line with its pid, address and a `~m#` record of its size and stack\n"
"(innermost frame first), after `map` records of the process's executable\n"
"mappings; `heapdecode` turns them into `~b#` lines and symbolizes them on\n"
"any machine.\n"
"\n"
"  -p, --pid PID          trace the running process PID\n"
"  -f, --follow-forks     trace the processes the target forks too, each\n"
"                         under its own pid, from its first allocation\n"
"                         (the probes then fire in every process using\n"
"                         that library, filtered in BPF); without -f a line\n"
"                         says that a child was not followed\n"
"  -u, --user USER        run COMMAND as USER (a name or uid: its groups,\n"
"                         HOME, USER and LOGNAME); heapsnoop stays root\n"
"  -a, --all              trace every process that uses a C library, those\n"
"                         started later and those of other mount namespaces\n"
"                         (containers) included\n"
"      --leaks-at-exit    -a, -f: when a process exits, write its live\n"
"                         allocations (an `exit` section); default: drop them\n"
"      --comm NAME        only processes named NAME (as `ps -o comm`) when\n"
"                         they start, exec or tracing begins; a later\n"
"                         rename changes nothing\n"
"      --pid-filter PID[,PID]...  only these processes (-a)\n"
"      --uid UID          only processes of user UID\n"
"      --min-size BYTES   only allocations of at least BYTES\n"
"      --max-size BYTES   only allocations of at most BYTES\n"
"  -o, --output FILE      write records to FILE (default: standard output;\n"
"                         a terminal there gets -s's summary and the\n"
"                         heapdecode commands instead, the records a new\n"
"                         file here, heapsnoop.PROGRAM.PID.heap);\n"
"                         a new FILE is mode 0600, an existing one set to\n"
"                         0600 and emptied only once tracing has started;\n"
"                         never written through a symbolic link; a FILE\n"
"                         named *.zst is written zstd-compressed\n"
"  -A, --append           with -o: append to FILE, keeping its content and\n"
"                         mode (a new FILE is 0600); heapdecode reads the\n"
"                         last dump unless told otherwise\n"
"  -i, --interval SECS    also write the live set every SECS seconds\n"
"      --sample-ms MS     write each process's live bytes and count every MS\n"
"                         milliseconds when they changed (default 100; 0: off)\n"
"      --top[=SECS]       on the terminal, a live view redrawn every SECS (1)\n"
"                         seconds: live bytes and blocks, allocations and\n"
"                         frees a second, the peak, events lost, then the\n"
"                         stacks holding the most live bytes with their\n"
"                         growth, one symbolized line each; the records go\n"
"                         where they would without it\n"
"  -s, --summary[=N]      at the end, print to standard error the biggest\n"
"                         holder (the innermost function of the program's\n"
"                         own, its file:line and caller), then the N (10)\n"
"                         stacks holding the most live bytes, symbolized,\n"
"                         each cut below main\n"
"      --full-stacks      -s: every frame, the C runtime's start below main\n"
"                         and runs of frames without a symbol too\n"
"      --allocator PATH   probe the allocator in PATH (jemalloc, tcmalloc,\n"
"                         mimalloc, or a static binary's own malloc) instead\n"
"                         of the C library the process maps: every entry\n"
"                         point its dynamic symbols have (malloc & co, C++\n"
"                         new/delete, jemalloc's *allocx, tc_*, mi_*; -v\n"
"                         lists them); with -p the process must map it;\n"
"                         with a command, PATH is looked for in the root\n"
"                         of each image it execs (a chroot's copy), and an\n"
"                         image whose root has none gets its own allocator\n"
"      --unwind fp|dwarf  how stacks are walked: dwarf (default) unwinds by\n"
"                         each module's CFI (.eh_frame), so code built\n"
"                         without frame pointers (Debian's) has complete\n"
"                         stacks; fp follows %rbp in BPF (less loader CPU),\n"
"                         complete only where every frame keeps %rbp\n"
"      --no-tails         dwarf: copy the whole stack at every allocation, not\n"
"                         only what lies below the part of a deep stack the\n"
"                         thread's last one had and still has (its words\n"
"                         checked in place: docs/DESIGN.md); for comparison\n"
"      --unwind-threads N dwarf: unwind stacks on N threads beside the event\n"
"                         loop's (default: one per CPU but two, up to 16;\n"
"                         0: the loop's thread alone)\n"
"      --keep-stacks[=MIB] dwarf: keep the live blocks' registers and stack\n"
"                         bytes in the dumps (ustack records, up to MIB\n"
"                         MiB held, default 64; those past it counted),\n"
"                         for heapdecode to unwind again elsewhere with\n"
"                         the debug files (docs/DESIGN.md); no tails\n"
"      --stack-copy BYTES dwarf: the most stack copied per allocation, a\n"
"                         power of two from 512 to 8388608 (default: the\n"
"                         whole stack up to 8 MiB, an eighth of the ring\n"
"                         buffer at most); deeper stacks are cut and counted\n"
"      --preload          no BPF: run COMMAND with the in-process collector\n"
"                         (LD_PRELOAD, docs/COLLECTOR.md); -o, -i, -f,\n"
"                         --unwind fp, --snip-*, --interp carry over,\n"
"                         SIGUSR1 asks for a dump; the BPF side's own\n"
"                         options are refused\n"
"      --sample-bytes N   record one allocation per N bytes allocated on\n"
"                         average (Poisson, as tcmalloc): the others cost no\n"
"                         stack and no record; dumps say sample-bytes=N and\n"
"                         heapdecode's reports estimate, unbiased, what the\n"
"                         sampled blocks stand for (size/p bytes, 1/p blocks)\n"
"      --seed N           --preload: the sampler's seed (repeatable runs)\n"
"      --interp KINDS     interpreters whose frames go among the native ones,\n"
"                         each function at its file:line (a comma list;\n"
"                         default python,lua), with -p or a command: python,\n"
"                         CPython 3.11 to 3.14 (a command's Python runs with\n"
"                         PYTHONMALLOC=malloc unless set, so each object is a\n"
"                         live block); lua, Lua 5.4 and 5.1 (named as Lua's\n"
"                         traceback names them, coroutines followed to their\n"
"                         resumers); none or --no-interp: native frames only.\n"
"                         By default a command that can run no interpreter\n"
"                         (no exec, dlopen; libc, libstdc++ alone) gets none\n"
"                         loaded, a shorter start (-v says).\n"
"                         --preload: python (3.11), read by the collector\n"
"      --no-perf-map      leave JIT code's frames unnamed: no process's\n"
"                         /tmp/perf-PID.map or jitdump is read (node\n"
"                         --perf-basic-prof, --perf-prof write them; by default\n"
"                         they name the frames, with lines where the jitdump\n"
"                         has them, and go into the log as jit records)\n"
"      --snip-pre N       drop the N innermost frames of every stack\n"
"      --snip-post N      drop the N outermost frames of complete stacks\n"
"      --on-full hold|sample|drop  when heapsnoop falls behind the traced\n"
"                         programs: hold (the default of -p and a command)\n"
"                         makes their processes wait, frozen by a cgroup of\n"
"                         heapsnoop's (cgroup v2), until it catches up, so\n"
"                         nothing is lost; sample (-a's default) records\n"
"                         small allocations as samples meanwhile, each\n"
"                         standing for the ones not recorded (shed= on its\n"
"                         live record: estimates, said); drop drops events\n"
"                         (counted, exit status 3). Neither slows them\n"
"      --ringbuf-size MB  BPF ring buffer size in MiB, a power of two up to\n"
"                         2048 (default 64)\n"
"      --thread-slots N   in-flight calls kept in N slots by thread id, a\n"
"                         power of two (default 16384); a thread whose slot\n"
"                         another's call holds uses a hash map (slower)\n"
"      --empty-probes[=read]  attach probes that do nothing (benchmark\n"
"                         floor); =read: the allocation's return reads 8\n"
"                         bytes of the stack, the kernel's cost of one read\n"
"      --without FEATURE[,FEATURE]...  do without these kernel features even\n"
"                         if the kernel has them, as older kernels must:\n"
"                         task-storage, task-btf, find-vma, jiffies, atomics,\n"
"                         uprobe-multi\n"
"                         (docs/KERNELS.md; -v says what the kernel has)\n"
"\n"
"CI gates (exit status below; the verdict and the stacks that broke it\n"
"on standard error, after the accounting):\n"
"      --fail-on-leak[=BYTES]  fail when more than BYTES (default 0) are\n"
"                         live when the traced processes end (with -a or\n"
"                         -f: --leaks-at-exit, each process at its exit),\n"
"                         suppressed stacks left out\n"
"      --suppressions FILE  stacks the leak gate leaves out, in\n"
"                         LeakSanitizer's format: `leak:PATTERN` lines\n"
"                         matching a function, module or source file of\n"
"                         any frame (`*` any text, `^` `$` anchor)\n"
"      --no-default-suppressions  count the C runtime's own allocations\n"
"                         (stdio buffers, TLS, the dynamic loader's, locale)\n"
"                         as leaks, and show them among the program's in -s;\n"
"                         by default they are left out and said apart\n"
"      --max-peak BYTES   fail when a process held more than BYTES live at\n"
"                         once (its peak, as the `proc` records say)\n"
"\n"
"  -q, --quiet            no live status line on a terminal\n"
"  -v, --verbose          say where each probe goes and why, how stacks were\n"
"                         unwound and the tables' memory; libbpf details\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"Signals: SIGUSR1 writes the live set without stopping.\n"
"Needs root, or CAP_BPF and CAP_PERFMON (and CAP_SYS_PTRACE for -p and -a);\n"
"without them, --preload traces a command.\n"
"\n"
"Examples:\n"
"  heapsnoop -s -- ./server --port 8080 | heapdecode\n"
"  heapsnoop -p $(pidof server) -i 60 -o heap.log\n"
"  heapsnoop -a --leaks-at-exit -s -o all.heap\n"
"  heapsnoop --fail-on-leak --suppressions lsan.supp -o /dev/null -- ./unit_tests\n"
"\n"
"Exit status, the first that applies:\n"
"  1   an error\n"
"  3   events were lost (the ring buffer was full, an exit was dropped...),\n"
"      or an image the command exec'd had no allocator to probe: the\n"
"      records are incomplete (in every mode; a gate is not trusted)\n"
"  23  --fail-on-leak: more than BYTES leaked, not suppressed\n"
"  24  --max-peak: a process's peak was above BYTES\n"
"  N   the command's own in launch mode (128 + N if killed by signal N);\n"
"      0 with -p and -a\n";

enum {
	OPT_ALLOCATOR = 256, OPT_SNIP_PRE, OPT_SNIP_POST, OPT_RINGBUF, OPT_EMPTY,
	OPT_LEAKS_AT_EXIT, OPT_COMM, OPT_PID_FILTER, OPT_UID, OPT_MIN_SIZE, OPT_MAX_SIZE,
	OPT_UNWIND, OPT_STACK_COPY, OPT_WITHOUT, OPT_SAMPLE_MS, OPT_PRELOAD, OPT_SAMPLE_BYTES,
	OPT_SEED, OPT_FAIL_ON_LEAK, OPT_SUPPRESSIONS, OPT_MAX_PEAK, OPT_THREAD_SLOTS,
	OPT_INTERP, OPT_NO_INTERP, OPT_NO_PERF_MAP, OPT_ON_FULL, OPT_UNWIND_THREADS, OPT_NO_TAILS,
	OPT_KEEP_STACKS,
	OPT_NO_DEFAULT_SUPP, OPT_TOP, OPT_FULL_STACKS,
};

static const struct option longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "user", required_argument, NULL, 'u' },
	{ "follow-forks", no_argument, NULL, 'f' },
	{ "leaks-at-exit", no_argument, NULL, OPT_LEAKS_AT_EXIT },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "pid-filter", required_argument, NULL, OPT_PID_FILTER },
	{ "uid", required_argument, NULL, OPT_UID },
	{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "output", required_argument, NULL, 'o' },
	{ "append", no_argument, NULL, 'A' },
	{ "interval", required_argument, NULL, 'i' },
	{ "sample-ms", required_argument, NULL, OPT_SAMPLE_MS },
	{ "summary", optional_argument, NULL, 's' },
	{ "top", optional_argument, NULL, OPT_TOP },
	{ "full-stacks", no_argument, NULL, OPT_FULL_STACKS },
	{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "stack-copy", required_argument, NULL, OPT_STACK_COPY },
	{ "unwind-threads", required_argument, NULL, OPT_UNWIND_THREADS },
	{ "no-tails", no_argument, NULL, OPT_NO_TAILS },
	{ "keep-stacks", optional_argument, NULL, OPT_KEEP_STACKS },
	{ "snip-pre", required_argument, NULL, OPT_SNIP_PRE },
	{ "snip-post", required_argument, NULL, OPT_SNIP_POST },
	{ "on-full", required_argument, NULL, OPT_ON_FULL },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "thread-slots", required_argument, NULL, OPT_THREAD_SLOTS },
	{ "empty-probes", optional_argument, NULL, OPT_EMPTY },
	{ "without", required_argument, NULL, OPT_WITHOUT },
	{ "preload", no_argument, NULL, OPT_PRELOAD },
	{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "fail-on-leak", optional_argument, NULL, OPT_FAIL_ON_LEAK },
	{ "suppressions", required_argument, NULL, OPT_SUPPRESSIONS },
	{ "no-default-suppressions", no_argument, NULL, OPT_NO_DEFAULT_SUPP },
	{ "max-peak", required_argument, NULL, OPT_MAX_PEAK },
	{ "interp", required_argument, NULL, OPT_INTERP },
	{ "no-interp", no_argument, NULL, OPT_NO_INTERP },
	{ "no-perf-map", no_argument, NULL, OPT_NO_PERF_MAP },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/*
 * The options --preload does not honour, each refused with it (one line
 * each) rather than ignored: what the collector does instead. -f and
 * --leaks-at-exit are its way already (it follows every fork, and writes
 * each process's end), -q and --no-perf-map hold (it has no status line,
 * reads no perf map); -p, -a, -A and the gates are refused in validate().
 */
static const struct {
	int c;
	const char *name, *why;
} bpf_only[] = {
	{ 'u', "-u", "the command runs as heapsnoop's user: run heapsnoop --preload as USER" },
	{ OPT_ALLOCATOR, "--allocator", "the collector wraps the malloc family the command "
	  "links (docs/COLLECTOR.md)" },
	{ OPT_COMM, "--comm", "every process the command makes is traced" },
	{ OPT_PID_FILTER, "--pid-filter", "every process the command makes is traced" },
	{ OPT_UID, "--uid", "every process the command makes is traced" },
	{ OPT_MIN_SIZE, "--min-size", "every allocation is recorded (--sample-bytes samples)" },
	{ OPT_MAX_SIZE, "--max-size", "every allocation is recorded (--sample-bytes samples)" },
	{ OPT_SAMPLE_MS, "--sample-ms", "the collector writes no sample records" },
	{ OPT_STACK_COPY, "--stack-copy", "the collector unwinds in the process, nothing copied" },
	{ OPT_NO_TAILS, "--no-tails", "the collector unwinds in the process, nothing copied" },
	{ OPT_KEEP_STACKS, "--keep-stacks", "the collector unwinds in the process, nothing "
	  "copied" },
	{ OPT_UNWIND_THREADS, "--unwind-threads", "each process unwinds its own stacks" },
	{ OPT_ON_FULL, "--on-full", "there is no ring buffer to fall behind: each process "
	  "keeps its own table" },
	{ OPT_RINGBUF, "--ringbuf-size", "there is no ring buffer" },
	{ OPT_THREAD_SLOTS, "--thread-slots", "there are no BPF thread slots" },
	{ OPT_EMPTY, "--empty-probes", "there are no probes" },
	{ OPT_WITHOUT, "--without", "no kernel feature is used" },
};

/*
 * @s as a decimal number from @min to @max into *@out. strtoul() alone
 * takes "-1" (as ULONG_MAX), " 7" and "+7": only digits are a number here.
 */
static int parse_range(const char *s, const char *what, unsigned long min, unsigned long max,
		       unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || errno || *end || v < min || v > max) {
		elog("invalid %s '%s' (expected a whole number from %lu to %lu)", what, s,
		     min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_uint(const char *s, const char *what, unsigned long max, unsigned long *out)
{
	return parse_range(s, what, 0, max, out);
}

/*
 * @s, the argument of --@opt (@what, in @unit), as a power of two from
 * @min to @max into *@out. Returns 0, or -EINVAL said on stderr.
 */
static int parse_pow2(const char *s, const char *opt, const char *what, const char *unit,
		      unsigned long min, unsigned long max, unsigned long *out)
{
	if (parse_range(s, what, min, max, out))
		return -EINVAL;
	if (*out & (*out - 1)) {
		elog("--%s must be a power of two (%s), from %lu to %lu", opt, unit, min, max);
		return -EINVAL;
	}
	return 0;
}

/* -a's filters: --comm, --pid-filter, --uid, --min-size, --max-size. */
static int parse_filter(int c, char *arg, struct options *o)
{
	unsigned long v;

	switch (c) {
	case OPT_COMM:
		if (!*arg || strlen(arg) > 15) {
			elog("--comm '%s': a process name has 1 to 15 characters (the kernel "
			     "keeps no more; see /proc/PID/comm)", arg);
			return -EINVAL;
		}
		o->comm = arg;
		return 0;
	case OPT_PID_FILTER:
		for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
			if (parse_range(tok, "pid", 1, INT_MAX, &v))
				return -EINVAL;
			if (o->npids == OPTIONS_MAX_PIDS) {
				elog("--pid-filter: at most %d pids", OPTIONS_MAX_PIDS);
				return -EINVAL;
			}
			o->pids[o->npids++] = (uint32_t)v;
		}
		return 0;
	case OPT_UID:
		if (parse_uint(arg, "uid", UINT32_MAX - 1, &v))
			return -EINVAL;
		o->uid = (long)v;
		return 0;
	default:	/* OPT_MIN_SIZE, OPT_MAX_SIZE */
		if (parse_uint(arg, "size", ULONG_MAX, &v))
			return -EINVAL;
		*(c == OPT_MIN_SIZE ? &o->min_size : &o->max_size) = v;
		return 0;
	}
}

/*
 * --snip-pre/--snip-post: frames each at most, the 33 they had when BPF's
 * walk kept 64 frames for a record's 31 (it keeps HS_BPF_MAX_FRAMES now,
 * the loader's unwinder REC_MAX_DEPTH plus both: track/trace.h).
 */
#define SNIP_MAX	33

/* How stacks are taken: --unwind, --stack-copy, --keep-stacks, --snip-pre, --snip-post. */
static int parse_stack(int c, const char *arg, struct options *o)
{
	unsigned long v;

	switch (c) {
	case OPT_UNWIND:
		if (strcmp(arg, "fp") && strcmp(arg, "dwarf")) {
			elog("--unwind '%s': give fp (frame pointers) or dwarf (CFI)", arg);
			return -EINVAL;
		}
		o->unwind_fp = !strcmp(arg, "fp");
		return 0;
	case OPT_UNWIND_THREADS:
		if (parse_uint(arg, "thread count", 256, &v))
			return -EINVAL;
		o->unwind_threads = (int)v;
		return 0;
	case OPT_KEEP_STACKS:
		/* A kept copy is the whole stack: a tail's frames were unwound from words not kept. */
		o->no_tails = true;
		o->keep_stacks_mb = KEEP_STACKS_DEFAULT_MB;
		if (arg && parse_range(arg, "--keep-stacks MiB", 1, 1 << 20, &v))
			return -EINVAL;
		if (arg)
			o->keep_stacks_mb = v;
		return 0;
	case OPT_STACK_COPY:
		if (parse_pow2(arg, "stack-copy", "stack copy size", "bytes", HS_USER_STACK_MIN,
			       HS_USER_STACK_MAX, &v))
			return -EINVAL;
		o->stack_copy = (unsigned int)v;
		return 0;
	default:	/* OPT_SNIP_PRE, OPT_SNIP_POST */
		if (parse_uint(arg, "frame count", SNIP_MAX, &v))
			return -EINVAL;
		*(c == OPT_SNIP_PRE ? &o->snip_pre : &o->snip_post) = (unsigned int)v;
		return 0;
	}
}

/*
 * What to trace and where the output goes: -p, -o, -i, --sample-ms, -s,
 * --top, --ringbuf-size, --thread-slots.
 */
static int parse_target(int c, const char *arg, struct options *o)
{
	unsigned long v;

	switch (c) {
	case 'p':
		if (parse_range(arg, "pid", 1, INT_MAX, &v))
			return -EINVAL;
		o->pid = (pid_t)v;
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case 'i':
		if (parse_range(arg, "interval (seconds)", 1, 86400 * 365, &v))
			return -EINVAL;
		o->interval = (unsigned int)v;
		return 0;
	case OPT_SAMPLE_MS:
		if (parse_uint(arg, "sample interval", 86400000, &v))
			return -EINVAL;
		o->sample_ms = (unsigned int)v;
		return 0;
	case 's':
		o->summary = 10;
		if (arg && parse_range(arg, "summary count", 1, 100000, &v))
			return -EINVAL;
		if (arg)
			o->summary = (unsigned int)v;
		return 0;
	case OPT_TOP:
		o->top = 1;
		if (arg && parse_range(arg, "--top interval (seconds)", 1, 3600, &v))
			return -EINVAL;
		if (arg)
			o->top = (unsigned int)v;
		return 0;
	case OPT_THREAD_SLOTS:
		if (parse_pow2(arg, "thread-slots", "thread slot count", "slots", 1, 1 << 20, &v))
			return -EINVAL;
		o->thread_slots = (unsigned int)v;
		return 0;
	default:	/* OPT_RINGBUF */
		/* The kernel's max_entries is 32 bits: 2048 MiB at most. */
		if (parse_pow2(arg, "ringbuf-size", "ring buffer size (MiB)", "MiB", 1, 2048, &v))
			return -EINVAL;
		o->ringbuf_mb = v;
		return 0;
	}
}

/* --preload's own: --sample-bytes, --seed. */
static int parse_preload(int c, const char *arg, struct options *o)
{
	unsigned long v;

	if (parse_uint(arg, c == OPT_SEED ? "seed" : "sample bytes", ULONG_MAX, &v))
		return -EINVAL;
	if (c == OPT_SEED) {
		o->seed = v;
	} else if (!v) {
		elog("--sample-bytes must be at least 1");
		return -EINVAL;
	} else {
		o->sample_bytes = v;
	}
	return 0;
}

/* --interp KINDS: which interpreters' frames are read (OPT_INTERP_* bits). */
static int parse_interp(char *arg, struct options *o)
{
	char *save = NULL;

	o->interp = 0;
	for (char *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "python")) {
			o->interp |= OPT_INTERP_PYTHON;
		} else if (!strcmp(tok, "lua")) {
			o->interp |= OPT_INTERP_LUA;
		} else if (strcmp(tok, "none")) {
			elog("--interp '%s': give python, lua (a comma list), or none", tok);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_one(int c, char *arg, struct options *o)
{
	switch (c) {
	case 'a': o->all = true; return 0;
	case 'u': o->user = arg; return 0;
	case 'f': o->follow_forks = true; return 0;
	case OPT_LEAKS_AT_EXIT: o->leaks_at_exit = true; return 0;
	case OPT_ALLOCATOR: o->allocator = arg; return 0;
	case OPT_EMPTY:
		if (arg && strcmp(arg, "read")) {
			elog("--empty-probes='%s': give no value, or read", arg);
			return -EINVAL;
		}
		o->empty_probes = true;
		o->empty_read = arg != NULL;
		return 0;
	case OPT_WITHOUT: return kfeatures__parse(arg, &o->without);
	case OPT_PRELOAD: o->preload = true; return 0;
	case OPT_INTERP:
		o->interp_asked = true;
		return parse_interp(arg, o);
	case OPT_NO_INTERP: o->interp = 0; return 0;
	case OPT_NO_PERF_MAP: o->no_perf_map = true; return 0;
	case OPT_NO_TAILS: o->no_tails = true; return 0;
	case OPT_FULL_STACKS: o->full_stacks = true; return 0;
	case OPT_ON_FULL:
		if (!strcmp(arg, "hold")) {
			o->on_full = OPT_ON_FULL_HOLD;
		} else if (!strcmp(arg, "sample")) {
			o->on_full = OPT_ON_FULL_SAMPLE;
		} else if (!strcmp(arg, "drop")) {
			o->on_full = OPT_ON_FULL_DROP;
		} else {
			elog("--on-full '%s': give hold (the traced processes wait), sample "
			     "(allocations recorded as samples, estimates said) or drop (events "
			     "are dropped, counted)", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_SAMPLE_BYTES: case OPT_SEED:
		return parse_preload(c, arg, o);
	case OPT_FAIL_ON_LEAK: case OPT_SUPPRESSIONS: case OPT_MAX_PEAK: case OPT_NO_DEFAULT_SUPP:
		return leakgate__option(&o->gate, c == OPT_FAIL_ON_LEAK ? "fail-on-leak" :
					c == OPT_SUPPRESSIONS ? "suppressions" :
					c == OPT_MAX_PEAK ? "max-peak" : "no-default-suppressions", arg);
	case 'q': o->quiet = true; return 0;
	case 'A': o->append = true; return 0;
	case 'v': o->verbose = true; return 0;
	case OPT_COMM: case OPT_PID_FILTER: case OPT_UID: case OPT_MIN_SIZE: case OPT_MAX_SIZE:
		return parse_filter(c, arg, o);
	case OPT_UNWIND: case OPT_STACK_COPY: case OPT_SNIP_PRE: case OPT_SNIP_POST:
	case OPT_UNWIND_THREADS: case OPT_KEEP_STACKS:
		return parse_stack(c, arg, o);
	case 'p': case 'o': case 'i': case 's': case OPT_RINGBUF: case OPT_SAMPLE_MS:
	case OPT_THREAD_SLOTS: case OPT_TOP:
		return parse_target(c, arg, o);
	case 'h':
		fputs(usage_text, stdout);
		exit(0);
	case 'V':
		printf("heapsnoop %s (git %s)\n", HEAPSNOOP_VERSION, HEAPSNOOP_GIT);
		exit(0);
	default:
		return -EINVAL;
	}
}

/* The gates' checks: what they need to see every process's end. */
static int validate_gates(const struct options *o)
{
	if (leakgate__check(&o->gate))
		return -EINVAL;
	if (o->gate.fail_on_leak && (o->all || o->follow_forks) && !o->leaks_at_exit) {
		elog("--fail-on-leak with %s needs --leaks-at-exit: the processes that end "
		     "before heapsnoop does are gated at their exit", o->all ? "-a" : "-f");
		return -EINVAL;
	}
	if (o->preload && leakgate__wanted(&o->gate)) {
		elog("the gates (--fail-on-leak, --max-peak) go with the BPF tracer, not "
		     "--preload");
		return -EINVAL;
	}
	return 0;
}

/* The checks that span options. */
static int validate(const struct options *o)
{
	if (!!o->pid + !!o->argv + o->all != 1) {
		elog(!o->pid && !o->argv && !o->all ?
		     "nothing to trace: give -p PID, -a or -- COMMAND" :
		     "give one of -p PID, -a or a command, not several");
		return -EINVAL;
	}
	if (o->user && !o->argv) {
		elog("-u USER goes with a command (heapsnoop -u USER -- COMMAND)");
		return -EINVAL;
	}
	if (o->follow_forks && o->all) {
		elog("-f goes with -p or a command (-a traces every process already)");
		return -EINVAL;
	}
	if (o->leaks_at_exit && !o->all && !o->follow_forks) {
		elog("--leaks-at-exit goes with -a or -f (with -p or a command, the live "
		     "set at the process's exit is the final dump)");
		return -EINVAL;
	}
	if (o->append && (!o->output || o->preload)) {
		elog(o->output ? "-A goes with the tracer's -o FILE, not --preload (the "
		     "collector's dumps go to their own file)" : "-A appends to -o FILE: give one");
		return -EINVAL;
	}
	if (o->preload && o->bpf_only) {
		for (unsigned int i = 0; i < sizeof(bpf_only) / sizeof(bpf_only[0]); i++)
			if (o->bpf_only & (1u << i))
				elog("%s goes with the BPF tracer, not --preload: %s",
				     bpf_only[i].name, bpf_only[i].why);
		return -EINVAL;
	}
	if (o->preload && !o->argv) {
		elog("--preload runs a command: give -- COMMAND");
		return -EINVAL;
	}
	if (o->preload && o->output && outfile__zstd_name(o->output)) {
		elog("-o %s: a compressed log (a name ending in .zst) is the BPF tracer's; "
		     "--preload writes plain records (give another name, and compress it after)",
		     o->output);
		return -EINVAL;
	}
	if (o->top && o->preload) {
		elog("--top goes with the BPF tracer, not --preload");
		return -EINVAL;
	}
	if (o->seed && !o->preload) {
		elog("--seed goes with --preload (the BPF tracer draws from the kernel's "
		     "generator)");
		return -EINVAL;
	}
	if (validate_gates(o))
		return -EINVAL;
	if (o->all && o->interp_asked && o->interp) {
		elog("--interp goes with -p or a command: -a reads native frames only (for now)");
		return -EINVAL;
	}
	if (o->all && o->on_full == OPT_ON_FULL_HOLD) {
		elog("--on-full hold goes with -p or a command: -a cannot make every process "
		     "on the machine wait");
		return -EINVAL;
	}
	if (o->keep_stacks_mb && (o->unwind_fp || o->snip_pre || o->snip_post)) {
		elog("--keep-stacks keeps what --unwind dwarf unwinds, every frame of it: not "
		     "with %s", o->unwind_fp ? "--unwind fp (no stack is copied)" :
		     "--snip-pre or --snip-post");
		return -EINVAL;
	}
	if (o->min_size > o->max_size) {
		elog("--min-size %" PRIu64 " is above --max-size %" PRIu64 ": nothing would "
		     "be traced", o->min_size, o->max_size);
		return -EINVAL;
	}
	return 0;
}

int options__parse(int argc, char **argv, struct options *o)
{
	int c;

	*o = (struct options){ .ringbuf_mb = 64, .stack_copy = HS_USER_STACK_DEFAULT,
			       .thread_slots = HS_THREAD_SLOTS, .uid = -1, .max_size = UINT64_MAX,
			       .sample_ms = 100, .interp = OPT_INTERP_PYTHON | OPT_INTERP_LUA,
			       .unwind_threads = -1 };
	while ((c = getopt_long(argc, argv, "+p:afu:o:Ai:s::qvhV", longopts, NULL)) != -1) {
		if (parse_one(c, optarg, o))
			return -EINVAL;
		for (unsigned int i = 0; i < sizeof(bpf_only) / sizeof(bpf_only[0]); i++)
			if (bpf_only[i].c == c)
				o->bpf_only |= 1u << i;
	}
	if (optind < argc)
		o->argv = argv + optind;
	return validate(o);
}

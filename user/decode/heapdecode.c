// SPDX-License-Identifier: MIT
/*
 * heapdecode - turn `~m#` allocation records in any text into `~b#` lines
 * (and back with --encode). Streams: constant memory, any line length.
 *
 * Format: docs/FORMAT.md. Exit status: 0, 1 if any token was malformed
 * (those lines are copied unchanged), 2 on a usage or I/O error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapsnoop/codec.h"
#include "hdgate.h"
#include "hdreport.h"
#include "hdstats.h"
#include "massif.h"
#include "msg.h"
#include "outfile.h"
#include "pprof.h"
#include "speedscope.h"
#include "recconv.h"
#include "symbolizer.h"
#include "timeline.h"
#include "tokscan.h"
#include "version.h"

static const char usage_text[] =
"Usage: heapdecode [OPTION]... [FILE]...\n"
"Decode heapsnoop / lws_backtrace allocation records found in FILEs (or\n"
"standard input) and write every line to standard output.\n"
"\n"
"Each `~m#TOKEN` anywhere in a line (after a timestamp, a pid, ...) is\n"
"replaced by its decoding `~b#size: N, 0xADDR 0xADDR ...`, innermost frame\n"
"first. A line that is nothing but a valid base64 record is decoded too.\n"
"Lines without a record pass through unchanged. A malformed record is left\n"
"as it was and reported on standard error with its file and line number.\n"
"\n"
"  -E, --encode     the reverse: each `~b#size: N, 0x...` becomes `~m#TOKEN`\n"
"\n"
"Grouping and symbolizing (the input is heapsnoop output or any log; of\n"
"several heapsnoop dumps in it, the last one is described):\n"
"  -s, --symbolize  copy the input as the default mode does, each record's\n"
"                   frames symbolized on the lines after it\n"
"      --report     identical stacks grouped, biggest first, each frame as\n"
"                   address, function+offset, module and source file:line\n"
"      --by KEY     with --report: group by stack (default), pid, function\n"
"                   or module (those of the allocator's caller, frame 0)\n"
"      --folded     one `main;f;g VALUE` line per stack (root first) for\n"
"                   flamegraph.pl, inferno or speedscope; VALUE is bytes\n"
"      --flamegraph FILE.svg  the same stacks as a self-contained interactive\n"
"                   SVG flame graph of live bytes (hover: frame, bytes and\n"
"                   share; click: zoom; Search: highlight by expression);\n"
"                   FILE is created mode 0600, never through a symbolic link\n"
"      --count      with --folded or --flamegraph: count allocations, not bytes\n"
"      --dump N|first|last|all  describe the Nth dump of the input (default:\n"
"                   last); all: --report or --folded of each dump in turn\n"
"      --base FILE  subtract FILE's last dump (a baseline of the same process):\n"
"                   every report, --folded, --flamegraph, --stats and --json\n"
"                   then show differences, growth positive, shrinkage\n"
"                   negative (a differential flame graph: red grew, blue shrank)\n"
"      --base-dump N|first  the baseline is the Nth dump of the input itself\n"
"\n"
"The whole run (heapsnoop's proc, stack and sample records, up to that dump):\n"
"      --stats      per process: peak live bytes and when, allocations, bytes\n"
"                   allocated, temporary allocations, live at the end; then\n"
"                   the top stacks by each of peak, allocations, temporary,\n"
"                   allocated bytes and live bytes\n"
"      --sort KEY   with --stats or --report: only the top stacks by KEY:\n"
"                   peak, allocations, temporary, allocated or live; with\n"
"                   --folded: each stack's whole-run KEY value\n"
"      --top N      stacks in each list of --stats, --growth (default 10)\n"
"      --growth     stacks whose live bytes grew between the first and the\n"
"                   last dump, biggest first, with their growth per dump and\n"
"                   in how many intervals between dumps they grew\n"
"      --json       processes and stacks with every count, as JSON\n"
"                   (schema: docs/OUTPUT.md)\n"
"      --timeline FILE.svg  the heap over time (heapsnoop --sample-ms) of the\n"
"                   4 processes with the highest peaks, the peak\n"
"                   marked, their top stacks' live bytes at each dump stacked\n"
"                   under the total; self-contained, hover shows time and bytes\n"
"      --massif FILE  the same for the process with the highest peak as a\n"
"                   valgrind massif file (ms_print, massif-visualizer)\n"
"\n"
"For the tools people already run (FILE - is standard output):\n"
"      --pprof FILE the live set (with --base: its change) as a gzip'ed pprof\n"
"                   profile (go tool pprof, Pyroscope, Parca, Grafana):\n"
"                   inuse_space/inuse_objects, and alloc_space/alloc_objects\n"
"                   from the whole-run records; frames symbolized here (no\n"
"                   binaries needed there), a pid label per sample; with\n"
"                   --by pid each process is a root frame of its own; a\n"
"                   FILE with %p: one profile per process, %p its pid\n"
"      --speedscope FILE  the same stacks as speedscope's JSON (its axes in\n"
"                   bytes, --count: allocations), a profile per process\n"
"                   (with --base: what grew and what shrank)\n"
"\n"
"heapsnoop's CI gates on a log (alone or with any report above; the verdict\n"
"on standard error):\n"
"      --fail-on-leak[=BYTES]  exit 23 when more than BYTES (0) are live in\n"
"                   the dump described (with --base: grew), not suppressed\n"
"      --suppressions FILE  LeakSanitizer's `leak:PATTERN` lines: stacks with\n"
"                   a frame whose function, module or source file matches\n"
"                   are not counted\n"
"      --max-peak BYTES  exit 24 when a process's peak (proc records) was\n"
"                   above BYTES\n"
"\n"
"Symbolizing:\n"
"  -e, --elf FILE   every address is an address in FILE (a non-PIE\n"
"                   program or a firmware image), as addr2line -e\n"
"      --sysroot DIR  find the traced machine's files under DIR: every path\n"
"                   in the log is resolved inside DIR, as if DIR were /\n"
"                   (\"..\" and symbolic links cannot leave it)\n"
"      --no-local-files  open no file a log names (a log from a stranger):\n"
"                   without --sysroot, frames are not named\n"
"      --debug-dir DIR  look for separate debug files in DIR too\n"
"Modules are matched to the traced files by build ID: a file that differs\n"
"is reported as a mismatch, never used to name frames. A path in a log is\n"
"opened only if it is a regular file, and never so that it could block.\n"
"Debug info is found\n"
"through /usr/lib/debug/.build-id, .gnu_debuglink and, when DEBUGINFOD_URLS\n"
"is set, debuginfod.\n"
"  -h, --help       show this help and exit\n"
"  -V, --version    show the version and exit\n"
"\n"
"With no FILE, or when FILE is -, read standard input.\n"
"\n"
"Exit status: 0 on success; 1 if any record was malformed (all lines were\n"
"still written); 2 on a usage error or an unreadable file; 23 and 24: a\n"
"gate broke (--fail-on-leak, --max-peak).\n"
"\n"
"Examples:\n"
"  heapsnoop -- ./server | heapdecode\n"
"  grep '~m#' device.log | heapdecode | cut -d'#' -f2\n"
"  echo '~b#size: 7520, 0x406651 0x406852' | heapdecode --encode\n"
"  heapdecode --pprof heap.pb.gz heap.log && go tool pprof -top heap.pb.gz\n"
"  heapdecode --fail-on-leak --suppressions lsan.supp heap.log\n"
"\n"
"Format: docs/FORMAT.md in the heapsnoop sources.\n";

/* @path, or standard input for "-"; NULL after saying why not. */
static FILE *open_input(const char *path)
{
	FILE *in;

	if (!strcmp(path, "-"))
		return stdin;
	in = fopen(path, "r");
	if (!in)
		elog("cannot open %s: %s", path, strerror(errno));
	return in;
}

/* Close @in (unless stdin); -1 after saying so if reading it failed. */
static int close_input(FILE *in, const char *path)
{
	int ret = 0;

	if (ferror(in)) {
		elog("error reading %s: %s", path, strerror(errno));
		ret = -1;
	}
	if (in != stdin)
		fclose(in);
	return ret;
}

static int scan_file(struct tokscan *ts, const char *path)
{
	static char buf[1 << 16];
	FILE *in = open_input(path);
	size_t n;

	if (!in)
		return -1;
	tokscan__begin(ts, in == stdin ? "<stdin>" : path);
	while ((n = fread_unlocked(buf, 1, sizeof(buf), in)) > 0)
		tokscan__feed(ts, buf, n);
	tokscan__end(ts);
	return close_input(in, path);
}

/*
 * Feed every line of @path to @r (grouping), or symbolize it to stdout
 * (@stream); count malformed records.
 */
static int group_file(struct hdreport *r, const char *path, bool stream, unsigned long *malformed)
{
	FILE *in = open_input(path);
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t n;

	if (!in)
		return -1;
	while ((n = getline(&line, &cap, in)) > 0) {
		int err;

		lineno++;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		/*
		 * A NUL byte would end the line early for every parser: -s lost
		 * the rest of it and --report its record, silently. The line is
		 * copied whole (-s) and counted as malformed.
		 */
		if (memchr(line, '\0', (size_t)n)) {
			(*malformed)++;
			elog("%s:%lu: a NUL byte in the line: %s", in == stdin ? "<stdin>" : path,
			     lineno, stream ? "copied unchanged, not symbolized" : "ignored");
			if (stream) {
				fwrite(line, 1, (size_t)n, stdout);
				putchar('\n');
			}
			continue;
		}
		err = stream ? hdreport__symbolize_line(r, line, stdout) : hdreport__line(r, line);
		if (err) {
			(*malformed)++;
			elog("%s:%lu: malformed ~m# record, %s: %s",
				in == stdin ? "<stdin>" : path, lineno,
				stream ? "left unchanged" : "ignored", hs_strerror(err));
		}
	}
	free(line);
	return close_input(in, path);
}

/*
 * --flamegraph, --timeline ('L'), --massif ('Y'), --pprof ('O') or
 * --speedscope ('Z') into
 * @out, opened before the input was read (outfile.h) and truncated only
 * now (NULL: standard output, for "-"); -1 after saying why.
 */
static int write_svg(struct hdreport *r, int mode, struct outfile *out, const char *path,
		     const char *input)
{
	FILE *f = out ? outfile__start(out) : stdout;
	char title[512];
	int err;

	if (!f)
		return -1;
	if (mode == 'O') {
		struct pprof_opts po = { .pid_root = hdreport__by(r) == HD_BY_PID };

		if (!out && strstr(path, "%p"))
			return pprof__write_each(r, &po, path);
		err = pprof__write(r, &po, f);
		if (err)
			elog("writing %s failed: %s", path, strerror(-err));
		return err ? -1 : 0;
	}
	if (mode == 'Z') {
		err = speedscope__write(r, f, input);
		if (err)
			elog("writing %s failed: %s", path, strerror(-err));
		return err ? -1 : 0;
	}
	snprintf(title, sizeof(title), "%s: %s", mode == 'L' ? "Heap over time" :
		 hdreport__is_diff(r) ? "Live heap, change from the baseline" : "Live heap", input);
	if (mode == 'L')
		err = timeline__svg(r, f, title, 4, 5);
	else if (mode == 'Y')
		err = massif__write(r, f);
	else
		err = hdreport__flamegraph(r, f, title);
	if (err == -ENOENT)
		elog("%s: no whole-run records (sample, proc, stack) in the input", path);
	else if (err)
		elog("writing %s failed", path);
	return err ? -1 : 0;
}

/* What the command line asks for. */
struct args {
	const struct tokscan_ops *ops;	/* the filter's direction */
	int group;			/* 0: filter; 's', 'R', 'F', 'G', 'T' (--stats),
					 * 'W' (--growth), 'J' (--json), 'L'
					 * (--timeline), 'Y' (--massif), 'O'
					 * (--pprof), 'Z' (--speedscope): grouping */
	const char *svg_path;		/* --flamegraph, --timeline, --massif,
					 * --pprof, --speedscope; "-": stdout */
	enum hd_sort sort;		/* --sort, HD_SORT__ALL: none */
	const char *base_file;		/* --base */
	unsigned int base_dump;		/* --base-dump, 0: the base's last */
	bool base;			/* --base or --base-dump given */
	bool all_dumps;			/* --dump all (--report, --folded) */
	unsigned int top;		/* --top */
	bool gating;			/* --fail-on-leak or --max-peak */
	struct leakgate_opts gate;
	struct hd_opts ho;
	struct symbolizer_opts so;
};

/*
 * The grouped output @a asks for, of everything @r took in, to standard
 * output or @out (the SVG or massif file); 0 or 2.
 */
static int write_grouped(struct hdreport *r, const struct args *a, struct outfile *out,
			 const char *input)
{
	switch (a->group) {
	case 'R':
		if (a->sort != HD_SORT__ALL)
			return hdstats__write(r, a->sort, a->top, stdout) == -ENOMEM ? 2 : 0;
		hdreport__report(r, stdout);
		return 0;
	case 'F':
		if (a->sort != HD_SORT__ALL)
			return hdstats__folded(r, a->sort, stdout) ? 2 : 0;
		hdreport__folded(r, stdout);
		return 0;
	case 'G': case 'L': case 'Y': case 'O': case 'Z':
		return write_svg(r, a->group, out, a->svg_path, input) ? 2 : 0;
	case 'T':
		return hdstats__write(r, a->sort, a->top, stdout) == -ENOMEM ? 2 : 0;
	case 'W':
		return hdstats__growth(r, a->top, stdout) == -ENOMEM ? 2 : 0;
	case 'J':
		return hdstats__json(r, stdout) ? 2 : 0;
	default:
		return 0;
	}
}

/* Feed @files (standard input if none) to @r; 0, or 2 if one failed. */
static int group_files(struct hdreport *r, char **files, int nfiles, bool stream,
		       unsigned long *malformed)
{
	int status = 0;

	if (nfiles == 0 && group_file(r, "-", stream, malformed))
		status = 2;
	for (int i = 0; i < nfiles; i++)
		if (group_file(r, files[i], stream, malformed))
			status = 2;
	return status;
}

/*
 * --base FILE or --base-dump N: the baseline, read from FILE (its last
 * dump, or --base-dump's) or from the input again; NULL on error (said).
 */
static struct hdreport *read_base(const struct args *a, struct symbolizer *sym, char **files,
				  int nfiles, unsigned long *malformed)
{
	struct hd_opts bo = a->ho;
	struct hdreport *base;
	char *base_file = (char *)a->base_file;

	if (!a->base_file && !nfiles) {
		elog("--base-dump reads the input twice: give it as a FILE, not standard input");
		return NULL;
	}
	bo.dump = a->base_dump;
	base = hdreport__new(&bo, sym);
	if (!base) {
		elog("out of memory");
		return NULL;
	}
	if (a->base_file ? group_files(base, &base_file, 1, false, malformed)
			 : group_files(base, files, nfiles, false, malformed)) {
		hdreport__free(base);
		return NULL;
	}
	return base;
}

/* --dump all: a heading, then dump @r's report, as --report or --folded. */
static void write_each(struct hdreport *r, void *ctx)
{
	const struct args *a = ctx;
	unsigned int n;
	const int64_t *t = runstats__dump_times(hdreport__runstats(r), &n);

	printf("== dump %u at %" PRId64 ".%03d\n", n, t[n] / 1000, (int)(t[n] % 1000));
	if (a->group == 'F')
		hdreport__folded(r, stdout);
	else
		hdreport__report(r, stdout);
}

static int run_grouping(const struct args *a, char **files, int nfiles)
{
	struct symbolizer *sym = NULL;
	struct hd_opts ho = a->ho;
	struct hdreport *r, *base = NULL;
	struct outfile *out = NULL;
	unsigned long malformed = 0;
	int status = 0, gate = 0;

	/* Opened first (a path that cannot be written fails at once), truncated last. */
	/* --pprof FILE with %p: a file per process, opened once they are known. */
	if (a->svg_path && strcmp(a->svg_path, "-") &&
	    !(a->group == 'O' && strstr(a->svg_path, "%p")) && !(out = outfile__open(a->svg_path)))
		return 2;
	if (a->all_dumps) {
		ho.each_dump = write_each;
		ho.ctx = (void *)a;
	}
	sym = symbolizer__new(&a->so);
	r = sym ? hdreport__new(&ho, sym) : NULL;
	if (!r) {
		elog("out of memory");
		symbolizer__free(sym);
		outfile__close(out);
		return 2;
	}
	status = group_files(r, files, nfiles, a->group == 's', &malformed);
	if (a->all_dumps && !status)
		write_each(r, (void *)a);	/* the last dump */
	if (!status && a->base) {
		base = read_base(a, sym, files, nfiles, &malformed);
		if (!base)
			status = 2;
		else if (hdreport__subtract(r, base)) {
			elog("out of memory");
			status = 2;
		}
	}
	/* An input unread: the SVG is not written. */
	if (!status && !a->all_dumps && write_grouped(r, a, out, nfiles ? files[nfiles - 1] : "stdin"))
		status = 2;
	if (!status && a->gating) {
		gate = hdgate__run(r, &a->gate, stderr);
		if (gate == -ENOMEM)
			elog("out of memory");
		status = gate < 0 ? 2 : 0;
	}
	if (outfile__close(out))
		status = 2;
	if (fflush(stdout) == EOF)
		status = 2;
	hdreport__free(r);
	hdreport__free(base);
	symbolizer__free(sym);
	if (!status && malformed) {
		elog("%lu malformed record(s) ignored%s", malformed,
		     gate > 0 ? ": the gate's verdict is not trusted" : "");
		status = 1;
	}
	return status ? status : gate;
}

static int parse_by(const char *s, enum hd_by *by)
{
	static const char *const keys[] = {
		[HD_BY_STACK] = "stack", [HD_BY_PID] = "pid",
		[HD_BY_FUNCTION] = "function", [HD_BY_MODULE] = "module",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!strcmp(s, keys[i])) {
			*by = (enum hd_by)i;
			return 0;
		}
	}
	elog("--by takes stack, pid, function or module");
	return -EINVAL;
}

/* @path is a directory (of --sysroot); -1 after saying why not. */
static int check_dir(const char *path, const char *opt)
{
	struct stat st;

	if (stat(path, &st)) {
		elog("%s %s: %s", opt, path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		elog("%s %s: not a directory", opt, path);
		return -1;
	}
	return 0;
}

/* --dump N|first|last into @dump (0: the last). */
static int parse_dump(const char *s, unsigned int *dump)
{
	if (!strcmp(s, "all")) {
		elog("--base-dump takes N, first or last");
		return -EINVAL;
	}
	char *end;
	unsigned long v;

	if (!strcmp(s, "last") || !strcmp(s, "first")) {
		*dump = s[0] == 'f';
		return 0;
	}
	v = strtoul(s, &end, 10);
	if (*s && !*end && v >= 1 && v <= 100000000) {
		*dump = (unsigned int)v;
		return 0;
	}
	elog("--dump takes N (1 is the first dump), first, last or all");
	return -EINVAL;
}

/* The options of the whole-run reports: --dump, --sort, --top. */
static int parse_run_opt(int c, const char *arg, struct args *a)
{
	char *end;
	unsigned long v;

	if (c == 'N' && !strcmp(arg, "all")) {
		a->all_dumps = true;
		return 0;
	}
	if (c == 'N' || c == 'M') {
		a->base |= c == 'M';
		return parse_dump(arg, c == 'N' ? &a->ho.dump : &a->base_dump);
	}
	if (c == 'K') {
		if (hdstats__parse_sort(arg, &a->sort)) {
			elog("--sort takes peak, allocations, temporary, allocated or live");
			return -EINVAL;
		}
		return 0;
	}
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || !v || v > 1000000) {
		elog("--top takes a number of stacks from 1 to 1000000");
		return -EINVAL;
	}
	a->top = (unsigned int)v;
	return 0;
}

/* The options that go together: the gates'. 0, or 2 after saying why. */
static int check_args(struct args *a)
{
	if (leakgate__check(&a->gate))
		return 2;
	a->gating = leakgate__wanted(&a->gate);
	if (a->gate.max_peak_set && a->base) {
		elog("--max-peak judges a run's peak, not a difference: no --base with it");
		return 2;
	}
	if (a->gating && (a->all_dumps || a->group == 's')) {
		elog("the gates judge one dump: not with --dump all or -s");
		return 2;
	}
	if (a->gating && !a->group)
		a->group = 'Q';	/* the gate alone: no report */
	return 0;
}

/* Returns 0 to go on, 1 after -h or -V, 2 (the exit status) on an error. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "encode", no_argument, NULL, 'E' },
		{ "report", no_argument, NULL, 'R' },
		{ "symbolize", no_argument, NULL, 's' },
		{ "flamegraph", required_argument, NULL, 'G' },
		{ "folded", no_argument, NULL, 'F' },
		{ "count", no_argument, NULL, 'C' },
		{ "by", required_argument, NULL, 'B' },
		{ "dump", required_argument, NULL, 'N' },
		{ "base", required_argument, NULL, 'A' },
		{ "base-dump", required_argument, NULL, 'M' },
		{ "stats", no_argument, NULL, 'T' },
		{ "growth", no_argument, NULL, 'W' },
		{ "json", no_argument, NULL, 'J' },
		{ "timeline", required_argument, NULL, 'L' },
		{ "massif", required_argument, NULL, 'Y' },
		{ "pprof", required_argument, NULL, 'O' },
		{ "speedscope", required_argument, NULL, 'Z' },
		{ "fail-on-leak", optional_argument, NULL, 'X' },
		{ "suppressions", required_argument, NULL, 'U' },
		{ "max-peak", required_argument, NULL, 'H' },
		{ "sort", required_argument, NULL, 'K' },
		{ "top", required_argument, NULL, 'P' },
		{ "elf", required_argument, NULL, 'e' },
		{ "sysroot", required_argument, NULL, 'S' },
		{ "no-local-files", no_argument, NULL, 'n' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "Ee:shV", longopts, NULL)) != -1) {
		switch (c) {
		case 'E': a->ops = &recconv_encode_ops; break;
		case 'R': case 'F': case 's': case 'T': case 'W': case 'J': a->group = c; break;
		case 'A': a->base_file = optarg; a->base = true; break;
		case 'X': case 'U': case 'H':
			if (leakgate__option(&a->gate, c == 'X' ? "fail-on-leak" :
					     c == 'U' ? "suppressions" : "max-peak", optarg))
				return 2;
			break;
		case 'N': case 'K': case 'P': case 'M':
			if (parse_run_opt(c, optarg, a))
				return 2;
			break;
		case 'G': case 'L': case 'Y': case 'O': case 'Z': a->group = c; a->svg_path = optarg; break;
		case 'C': a->ho.count_values = true; break;
		case 'B':
			if (parse_by(optarg, &a->ho.by))
				return 2;
			break;
		case 'e': a->ho.elf = optarg; break;
		case 'S':
			if (check_dir(optarg, "--sysroot"))
				return 2;
			a->so.sysroot = optarg;
			break;
		case 'n': a->so.no_local_files = true; break;
		case 'D': a->so.debug_dir = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		case 'V':
			printf("heapdecode %s\n", HEAPSNOOP_VERSION);
			return 1;
		default:
			fputs("Try 'heapdecode --help' for more information.\n", stderr);
			return 2;
		}
	}
	return check_args(a);
}

/* The default mode: every file through the scanner to standard output. */
static int run_filter(const struct tokscan_ops *ops, char **files, int nfiles)
{
	struct tokscan *ts = tokscan__new(ops, NULL, stdout, true);
	int status = 0;

	if (!ts) {
		elog("out of memory");
		return 2;
	}
	if (nfiles == 0 && scan_file(ts, "-"))
		status = 2;
	for (int i = 0; i < nfiles; i++)
		if (scan_file(ts, files[i]))
			status = 2;
	if (fflush(stdout) == EOF) {
		elog("error writing output: %s", strerror(errno));
		status = 2;
	}
	if (!status && tokscan__malformed(ts)) {
		elog("%lu malformed record(s) left unchanged", tokscan__malformed(ts));
		status = 1;
	}
	tokscan__free(ts);
	return status;
}

int main(int argc, char **argv)
{
	static char obuf[1 << 18];
	struct args a = { .ops = &recconv_decode_ops, .sort = HD_SORT__ALL, .top = 10 };
	int err;

	msg_init("heapdecode");
	err = parse_args(argc, argv, &a);
	if (err)
		return err == 1 ? 0 : err;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (a.group)
		return run_grouping(&a, argv + optind, argc - optind);
	return run_filter(a.ops, argv + optind, argc - optind);
}

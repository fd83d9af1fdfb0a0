// SPDX-License-Identifier: MIT
/*
 * hdargs.c - heapdecode's command line (see hdargs.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hdargs.h"
#include "heapsnoop/exit.h"
#include "msg.h"
#include "input/recconv.h"
#include "model/frameview.h"
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
"      --report     first the biggest holder (the innermost function of the\n"
"                   program's own, allocator and C runtime skipped, its\n"
"                   file:line and caller), then identical stacks grouped,\n"
"                   biggest first, each frame as address, function+offset,\n"
"                   module and source file:line, cut below main\n"
"      --by KEY     with --report: group by stack (default), pid, function\n"
"                   (the holder, inlined ones included, with its callers\n"
"                   beneath and their shares) or module (frame 0's)\n"
"      --full-stacks  with --report, --growth: every frame, the C runtime's\n"
"                   start below main and runs of frames without a symbol too\n"
"      --frames KIND  with --report, --folded, --flamegraph, --speedscope:\n"
"                   only KIND's frames (python, lua, or interpreter: any\n"
"                   interpreter's), the native frames between them left\n"
"                   out, those at the leaf one frame [native]: a Python\n"
"                   program's stacks read as Python tracebacks\n"
"      --folded     one `main;f;g VALUE` line per stack (root first) for\n"
"                   flamegraph.pl, inferno or speedscope; VALUE is bytes\n"
"      --flamegraph FILE.svg  the same stacks as a self-contained interactive\n"
"                   SVG flame graph of live bytes (hover: frame, bytes and\n"
"                   share; click: zoom; Search: highlight by expression);\n"
"                   FILE is created mode 0600, never through a symbolic link\n"
"      --width PX   the flame graph's width in pixels (default 1200; --html:\n"
"                   the window's)\n"
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
"      --top N      stacks in each list of --stats, --growth (default 10);\n"
"                   rows of --report (default: all); holders of --html (10)\n"
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
"      --html FILE  one self-contained page to open in a browser (no\n"
"                   network): the headline, the top holders (--top, default\n"
"                   10) with their callers, the flame graph as wide as the\n"
"                   window (--width PX: fixed), a toggle that dims or hides\n"
"                   interpreters' frames, and the heap over time with its\n"
"                   peak (heapsnoop --sample-ms); every text of the log escaped\n"
"\n"
"heapsnoop's CI gates on a log (alone or with any report above; the verdict\n"
"on standard error):\n"
"      --fail-on-leak[=BYTES]  exit 23 when more than BYTES (0) are live in\n"
"                   the dump described (with --base: grew), not suppressed\n"
"      --suppressions FILE  LeakSanitizer's `leak:PATTERN` lines: stacks with\n"
"                   a frame whose function, module or source file matches\n"
"                   are not counted\n"
"      --no-default-suppressions  the C runtime's own allocations (stdio\n"
"                   buffers, TLS, the dynamic loader's, locale) counted as\n"
"                   leaks and shown among the program's in --report; by\n"
"                   default left out, and said apart after the report\n"
"      --max-peak BYTES  exit 24 when a process's peak (proc records) was\n"
"                   above BYTES\n"
"\n"
"Symbolizing:\n"
"  -e, --elf FILE   every address is an address in FILE (a non-PIE\n"
"                   program or a firmware image), as addr2line -e; FILE is\n"
"                   yours, not the log's: relative to the current directory\n"
"      --sysroot DIR  find the traced machine's files under DIR: every path\n"
"                   in the log is resolved inside DIR, as if DIR were /\n"
"                   (\"..\" and symbolic links cannot leave it)\n"
"      --no-local-files  open no file a log names (a log from a stranger):\n"
"                   without --sysroot, frames are not named\n"
"      --debug-dir DIR  look for separate debug files in DIR too, and for a\n"
"                   module whose path is not there by its build ID:\n"
"                   DIR/.build-id/xx/rest (the file), rest.debug (its\n"
"                   debug file), as /usr/lib/debug/.build-id is\n"
"      --no-unwind-offline  ignore the log's ustack records (heapsnoop\n"
"                   --keep-stacks): every stack as the tracer unwound it;\n"
"                   by default they are unwound again here, with the files\n"
"                   found here (.debug_frame in debug files included), the\n"
"                   online frames kept where that ends sooner\n"
"      --symbol-versions  name functions as the symbol table does, with their\n"
"                   version (malloc@@GLIBC_2.2.5); by default every output\n"
"                   names them without it (malloc)\n"
"Modules are matched to the traced files by build ID: a file that differs\n"
"is reported as a mismatch, never used to name frames; a module not found\n"
"or not matched is said once on standard error (its path, build ID and\n"
"what to try), its frames shown as module+0xOFFSET (the offset in its\n"
"file). A path in a log is opened only if it is a regular file, and never\n"
"so that it could block. Debug info is found\n"
"through /usr/lib/debug/.build-id, .gnu_debuglink and, when DEBUGINFOD_URLS\n"
"is set, debuginfod (elfutils' debuginfod-find, Debian's package debuginfod).\n"
"  -h, --help       show this help and exit\n"
"  -V, --version    show the version and exit\n"
"\n"
"With no FILE, or when FILE is -, read standard input; with no FILE it must\n"
"not be a terminal (give - to type records there).\n"
"An output FILE (--flamegraph, --pprof, ...) is never written over when it\n"
"is one of the FILEs read, or holds a heapsnoop log (its records, or zstd):\n"
"a forgotten output name, `heapdecode --flamegraph heap.log`, is refused.\n"
"A file with no record is an error; a last dump cut before its end-dump is\n"
"said, and the complete one before it reported (exit status 1).\n"
"\n"
"Exit status: 0 on success; 1 if any record was malformed (all lines were\n"
"still written) or the last dump was cut; 2 on a usage error, an unreadable\n"
"file, or one with no record; 3 if no frame could be named (every address\n"
"looked up in a module's file, or -e's, named no function: said); 23 and\n"
"24: a gate broke (--fail-on-leak, --max-peak).\n"
"\n"
"Examples:\n"
"  heapsnoop -- ./server | heapdecode\n"
"  grep '~m#' device.log | heapdecode | cut -d'#' -f2\n"
"  echo '~b#size: 7520, 0x406651 0x406852' | heapdecode --encode\n"
"  heapdecode --pprof heap.pb.gz heap.log && go tool pprof -top heap.pb.gz\n"
"  heapdecode --fail-on-leak --suppressions lsan.supp heap.log\n"
"\n"
"Format: docs/FORMAT.md in the heapsnoop sources.\n";

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

/*
 * @path is a directory (of --sysroot), or with @dir false a regular file
 * (-e's: the user's own, relative to the cwd); -1 after saying why not.
 */
static int check_path(const char *path, const char *opt, bool dir)
{
	struct stat st;

	if (stat(path, &st)) {
		elog("%s %s: %s", opt, path, strerror(errno));
		return -1;
	}
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		elog("%s %s: not a %s", opt, path, dir ? "directory" : "regular file");
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

/* The options of the whole-run reports: --dump, --sort, --top; --width. */
static int parse_run_opt(int c, const char *arg, struct hd_args *a)
{
	char *end;
	unsigned long v;

	if (c == 'N' && !strcmp(arg, "all")) {
		a->all_dumps = true;
		return 0;
	}
	if (c == 'N' || c == 'M') {
		a->base |= c == 'M';
		return parse_dump(arg, c == 'N' ? &a->mo.dump : &a->base_dump);
	}
	if (c == 'K') {
		if (hd_top__parse_sort(arg, &a->wo.sort)) {
			elog("--sort takes peak, allocations, temporary, allocated or live");
			return -EINVAL;
		}
		return 0;
	}
	v = strtoul(arg, &end, 10);
	if (c == 'W') {
		if (!*arg || *end || v < 200 || v > 100000) {
			elog("--width takes the flame graph's width in px, 200 to 100000");
			return -EINVAL;
		}
		a->wo.width = (int)v;
		return 0;
	}
	if (!*arg || *end || !v || v > 1000000) {
		elog("--top takes a number of stacks from 1 to 1000000");
		return -EINVAL;
	}
	a->wo.top = (unsigned int)v;
	a->wo.top_set = true;
	return 0;
}

/* The options that go together: the gates'. 0, or HD_EXIT_ERROR after saying why. */
static int check_args(struct hd_args *a)
{
	if (leakgate__check(&a->gate))
		return HD_EXIT_ERROR;
	a->gating = leakgate__wanted(&a->gate);
	a->wo.runtime_apart = !a->gate.no_default_supp;
	if (a->gate.max_peak_set && a->base) {
		elog("--max-peak judges a run's peak, not a difference: no --base with it");
		return HD_EXIT_ERROR;
	}
	if (a->gating && (a->all_dumps || a->output == HD_OUT_SYMBOLIZE)) {
		elog("the gates judge one dump: not with --dump all or -s");
		return HD_EXIT_ERROR;
	}
	/* A view of the live set's stacks: the writers that draw them alone. */
	if (a->mo.frames && (a->gating || a->wo.sort != HD_SORT__ALL ||
			     (a->output != HD_OUT_REPORT && a->output != HD_OUT_FOLDED &&
			      a->output != HD_OUT_FLAMEGRAPH && a->output != HD_OUT_SPEEDSCOPE))) {
		elog("--frames views the live set of --report, --folded, --flamegraph or"
		     " --speedscope: not with --sort, the gates or another output");
		return HD_EXIT_ERROR;
	}
	return 0;
}

/*
 * The options that pick an output are the writers' (writers.h): @v's
 * entries valued OPT_OUTPUT + an enum hd_output get their name there.
 */
#define OPT_OUTPUT 0x100
static void name_outputs(struct option *v)
{
	for (; v->val; v++) {
		const struct hd_writer *w;

		if (v->val < OPT_OUTPUT)
			continue;
		w = hd_writer__of((enum hd_output)(v->val - OPT_OUTPUT));
		v->name = w->option;
		v->has_arg = w->to_file ? required_argument : no_argument;
	}
}

int hd_args__parse(int argc, char **argv, struct hd_args *a)
{
	struct option longopts[] = {
		{ "encode", no_argument, NULL, 'E' },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_REPORT },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_SYMBOLIZE },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_FLAMEGRAPH },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_FOLDED },
		{ "count", no_argument, NULL, 'C' },
		{ "by", required_argument, NULL, 'B' },
		{ "dump", required_argument, NULL, 'N' },
		{ "base", required_argument, NULL, 'A' },
		{ "base-dump", required_argument, NULL, 'M' },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_STATS },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_GROWTH },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_JSON },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_TIMELINE },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_MASSIF },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_PPROF },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_SPEEDSCOPE },
		{ "", 0, NULL, OPT_OUTPUT + HD_OUT_HTML },
		{ "fail-on-leak", optional_argument, NULL, 'X' },
		{ "suppressions", required_argument, NULL, 'U' },
		{ "no-default-suppressions", no_argument, NULL, 'G' },
		{ "max-peak", required_argument, NULL, 'H' },
		{ "sort", required_argument, NULL, 'K' },
		{ "top", required_argument, NULL, 'P' },
		{ "width", required_argument, NULL, 'W' },
		{ "full-stacks", no_argument, NULL, 'F' },
		{ "frames", required_argument, NULL, 'R' },
		{ "elf", required_argument, NULL, 'e' },
		{ "sysroot", required_argument, NULL, 'S' },
		{ "no-local-files", no_argument, NULL, 'n' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "symbol-versions", no_argument, NULL, 'y' },
		{ "no-unwind-offline", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	*a = (struct hd_args){ .ops = &recconv_decode_ops,
			       .wo = { .sort = HD_SORT__ALL, .top = 10 } };
	name_outputs(longopts);
	while ((c = getopt_long(argc, argv, "Ee:shV", longopts, NULL)) != -1) {
		if (c == 's')
			c = OPT_OUTPUT + HD_OUT_SYMBOLIZE;
		if (c >= OPT_OUTPUT) {
			/* A FILE stays the last one given, whichever output is chosen. */
			a->output = (enum hd_output)(c - OPT_OUTPUT);
			if (hd_writer__of(a->output)->to_file)
				a->wo.path = optarg;
			continue;
		}
		switch (c) {
		case 'E': a->ops = &recconv_encode_ops; break;
		case 'A': a->base_file = optarg; a->base = true; break;
		case 'X': case 'U': case 'H': case 'G':
			if (leakgate__option(&a->gate, c == 'X' ? "fail-on-leak" :
					     c == 'U' ? "suppressions" : c == 'H' ? "max-peak" :
					     "no-default-suppressions", optarg))
				return HD_EXIT_ERROR;
			break;
		case 'N': case 'K': case 'P': case 'M': case 'W':
			if (parse_run_opt(c, optarg, a))
				return HD_EXIT_ERROR;
			break;
		case 'C': a->wo.counts = true; break;
		case 'F': a->wo.full_stacks = true; break;
		case 'R':
			if (!frameview__valid(optarg)) {
				elog("--frames takes python, lua or interpreter (any interpreter's)");
				return HD_EXIT_ERROR;
			}
			a->mo.frames = optarg;
			break;
		case 'B':
			if (parse_by(optarg, &a->wo.by))
				return HD_EXIT_ERROR;
			break;
		case 'e':
			if (check_path(optarg, "-e", false))
				return HD_EXIT_ERROR;
			a->mo.elf = optarg;
			break;
		case 'S':
			if (check_path(optarg, "--sysroot", true))
				return HD_EXIT_ERROR;
			a->so.sysroot = optarg;
			break;
		case 'n': a->so.no_local_files = true; break;
		case 'O': a->mo.no_offline = true; break;
		case 'D': a->so.debug_dir = optarg; break;
		case 'y': a->so.symbol_versions = true; break;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		case 'V':
			printf("heapdecode %s (git %s)\n", HEAPSNOOP_VERSION, HEAPSNOOP_GIT);
			return 1;
		default:
			fputs("Try 'heapdecode --help' for more information.\n", stderr);
			return HD_EXIT_ERROR;
		}
	}
	a->wo.input = optind < argc ? argv[argc - 1] : "stdin";
	return check_args(a);
}

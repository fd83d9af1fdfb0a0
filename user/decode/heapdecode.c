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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapsnoop/codec.h"
#include "hdreport.h"
#include "msg.h"
#include "outfile.h"
#include "recconv.h"
#include "symbolizer.h"
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
"still written); 2 on a usage error or an unreadable file.\n"
"\n"
"Examples:\n"
"  heapsnoop -- ./server | heapdecode\n"
"  grep '~m#' device.log | heapdecode | cut -d'#' -f2\n"
"  echo '~b#size: 7520, 0x406651 0x406852' | heapdecode --encode\n"
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

/* The SVG into @svg, opened before the input was read; -1 after saying why. */
static int write_svg(struct hdreport *r, struct outfile *svg, const char *input)
{
	FILE *f = outfile__start(svg);
	char title[512];

	if (!f)
		return -1;
	snprintf(title, sizeof(title), "Live heap: %s", input);
	if (hdreport__flamegraph(r, f, title)) {
		elog("writing the flame graph failed");
		return -1;
	}
	return 0;
}

static int run_grouping(int mode, const struct hd_opts *ho, const struct symbolizer_opts *so,
			const char *svg_path, char **files, int nfiles)
{
	struct symbolizer *sym = NULL;
	struct hdreport *r = NULL;
	struct outfile *svg = NULL;
	unsigned long malformed = 0;
	int status = 0;

	/* Opened first (a path that cannot be written fails at once), truncated last. */
	if (mode == 'G' && !(svg = outfile__open(svg_path)))
		return 2;
	sym = symbolizer__new(so);
	r = sym ? hdreport__new(ho, sym) : NULL;
	if (!r) {
		elog("out of memory");
		symbolizer__free(sym);
		outfile__close(svg);
		return 2;
	}
	if (nfiles == 0 && group_file(r, "-", mode == 's', &malformed))
		status = 2;
	for (int i = 0; i < nfiles; i++)
		if (group_file(r, files[i], mode == 's', &malformed))
			status = 2;
	if (mode == 'R')
		hdreport__report(r, stdout);
	else if (mode == 'F')
		hdreport__folded(r, stdout);
	else if (mode == 'G' && !status && write_svg(r, svg, nfiles ? files[nfiles - 1] : "stdin"))
		status = 2;	/* an input unread: the SVG is not written */
	if (outfile__close(svg))
		status = 2;
	if (fflush(stdout) == EOF)
		status = 2;
	hdreport__free(r);
	symbolizer__free(sym);
	if (!status && malformed) {
		elog("%lu malformed record(s) ignored", malformed);
		status = 1;
	}
	return status;
}

/* What the command line asks for. */
struct args {
	const struct tokscan_ops *ops;	/* the filter's direction */
	int group;			/* 0: filter; 's', 'R', 'F', 'G': grouping */
	const char *svg_path;		/* --flamegraph */
	struct hd_opts ho;
	struct symbolizer_opts so;
};

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
		{ "elf", required_argument, NULL, 'e' },
		{ "sysroot", required_argument, NULL, 'S' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "no-local-files", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "Ee:shV", longopts, NULL)) != -1) {
		switch (c) {
		case 'E': a->ops = &recconv_encode_ops; break;
		case 'R': case 'F': case 's': a->group = c; break;
		case 'G': a->group = c; a->svg_path = optarg; break;
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
		case 'N': a->so.no_local_files = true; break;
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
	return 0;
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
	struct args a = { .ops = &recconv_decode_ops };
	int err;

	msg_init("heapdecode");
	err = parse_args(argc, argv, &a);
	if (err)
		return err == 1 ? 0 : err;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (a.group)
		return run_grouping(a.group, &a.ho, &a.so, a.svg_path, argv + optind,
				    argc - optind);
	return run_filter(a.ops, argv + optind, argc - optind);
}

// SPDX-License-Identifier: MIT
/*
 * logread.c - a log's files read, line by line or through the filter
 * (see logread.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "heapsnoop/codec.h"
#include "input/logread.h"
#include "input/zread.h"
#include "msg.h"
#include "stacks.h"

void hd_line__parse(struct hd_line *l, const char *text)
{
	l->text = text;
	l->parsed = records__parse(text, &l->rec);
}

uint32_t hd_line__pid(const struct hd_line *l)
{
	const char *p;

	if (l->rec.type == REC_LIVE)
		return (uint32_t)l->rec.pid;
	p = strstr(l->text, "pid=");
	return p ? (uint32_t)(pid_t)strtol(p + 4, NULL, 10) : 0;
}

uint32_t hd_line__cut(const struct hd_line *l)
{
	/* cut= is the same bits as a stack's flags (stacks.h). */
	if (l->rec.type != REC_LIVE && l->rec.type != REC_STACK)
		return 0;
	return l->rec.cut & STACK_CUT_ALL;
}

/* @path as messages name it. */
static const char *input_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

/*
 * @path, or standard input for "-", as text (decompressed if it is zstd:
 * zread.h); NULL after saying why not.
 */
static FILE *open_input(const char *path)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin, *text;

	if (!in) {
		elog("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	text = zread__open(in, input_name(path));
	if (!text && in != stdin)
		fclose(in);
	return text;
}

/* Close @in (unless stdin); -1 after saying so if reading it failed. */
static int close_input(FILE *in, const char *path)
{
	int ret = 0;

	if (ferror(in)) {
		elog("error reading %s: %s", input_name(path), strerror(errno));
		ret = -1;
	}
	if (in != stdin)
		fclose(in);
	return ret;
}

/* @path through @ts, or through @tr's lines to it. */
static int scan_file(struct tokscan *ts, struct treescan *tr, const char *path)
{
	static char buf[1 << 16];
	FILE *in = open_input(path);
	size_t n;

	if (!in)
		return -1;
	if (tr)
		treescan__begin(tr, input_name(path));
	else
		tokscan__begin(ts, input_name(path));
	while ((n = fread_unlocked(buf, 1, sizeof(buf), in)) > 0) {
		if (tr)
			treescan__feed(tr, buf, n);
		else
			tokscan__feed(ts, buf, n);
	}
	if (tr)
		treescan__end(tr);
	else
		tokscan__end(ts);
	return close_input(in, path);
}

/* Every line of @path to @take; malformed ones counted in *@malformed. */
static int read_lines(const char *path, hd_line_fn take, void *ctx, FILE *copy,
		      unsigned long *malformed)
{
	FILE *in = open_input(path);
	const char *name = input_name(path);
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t n;

	if (!in)
		return -1;
	while ((n = getline(&line, &cap, in)) > 0) {
		struct hd_line l;
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
			elog("%s:%lu: a NUL byte in the line: %s", name, lineno,
			     copy ? "copied unchanged, not symbolized" : "ignored");
			if (copy) {
				fwrite(line, 1, (size_t)n, copy);
				putc('\n', copy);
			}
			l = (struct hd_line){ .text = line, .parsed = HD_LINE_UNREAD };
			take(ctx, &l);
			continue;
		}
		hd_line__parse(&l, line);
		err = take(ctx, &l);
		if (err > 0) {
			/* A stack whose later token broke: what came before, kept cut. */
			(*malformed)++;
			elog("%s:%lu: malformed ~m# record, its stack kept only up to the token "
			     "that broke, marked truncated: %s", name, lineno, hs_strerror(err));
		} else if (err) {
			(*malformed)++;
			elog("%s:%lu: malformed ~m# record, %s: %s", name, lineno,
			     copy ? "left unchanged" : "ignored", hs_strerror(err));
		}
	}
	free(line);
	return close_input(in, path);
}

int hd_input__lines(char *const *files, int nfiles, hd_line_fn take, void *ctx, FILE *copy,
		    unsigned long *malformed)
{
	int status = 0;

	if (nfiles == 0 && read_lines("-", take, ctx, copy, malformed))
		status = -1;
	for (int i = 0; i < nfiles; i++)
		if (read_lines(files[i], take, ctx, copy, malformed))
			status = -1;
	return status;
}

int hd_input__scan(struct tokscan *ts, struct treescan *tr, char *const *files, int nfiles)
{
	int status = 0;

	if (nfiles == 0 && scan_file(ts, tr, "-"))
		status = -1;
	for (int i = 0; i < nfiles; i++)
		if (scan_file(ts, tr, files[i]))
			status = -1;
	return status;
}

/* SPDX-License-Identifier: MIT */
/*
 * logread.h - a log as heapdecode reads it: its files (or standard input),
 * plain or zstd (zread.h), line by line, each line parsed once into the
 * record it holds (records.h, docs/OUTPUT.md) and handed to the model or
 * to -s; or in chunks through the streaming `~m#`/`~b#` filter (tokscan.h;
 * treescan.h for the tree form's stacks). A log is any text: the `~m#`
 * tokens of a line belong to its `live` record's process, or in a line
 * that is not heapsnoop's to its first "pid=".
 */
#ifndef HEAPDECODE_LOGREAD_H
#define HEAPDECODE_LOGREAD_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "records.h"
#include "input/tokscan.h"
#include "input/treescan.h"

/* One line of a log, parsed. */
struct hd_line {
	const char *text;	/* the line, without its newline */
	struct record rec;	/* its record; strings point into @text */
	int parsed;		/* records__parse(): 0, -ENOENT (no record
				 * keyword), -EINVAL (a record, malformed);
				 * HD_LINE_UNREAD: a line not read (a NUL byte
				 * in it), said already */
};

/*
 * A line that could not be read (hd_line's parsed): handed over all the
 * same, only so that the trees of stacks are numbered no further past it
 * (a `node` record it held would shift every node after it).
 */
#define HD_LINE_UNREAD	(-EILSEQ)

/* Parse @text (NUL-terminated, no newline) into @l. */
void hd_line__parse(struct hd_line *l, const char *text);

/*
 * The process of @l's `~m#` tokens: its `live` record's pid, else the
 * first "pid=N" of the line (a log that is not heapsnoop's); 0: none.
 */
uint32_t hd_line__pid(const struct hd_line *l);

/* A `live` or `stack` record's cut= as stacks.h's STACK_* flags; 0 for any other line. */
uint32_t hd_line__cut(const struct hd_line *l);

/*
 * Take one line; 0, or a negative hs_err: the line is malformed (counted
 * and said by the reader, with its file and line number); or a positive
 * hs_err: a record whose stack broke after its first token, taken with
 * the frames before, marked truncated (counted and said as well).
 */
typedef int (*hd_line_fn)(void *ctx, const struct hd_line *l);

/*
 * Read @nfiles @files (standard input if none; "-" is standard input;
 * plain text or zstd, zread.h), each line parsed and handed to @take. A
 * line @take refuses, or one with a NUL byte (which would end it early
 * for every parser), is counted in *@malformed and said on standard
 * error; with @copy (-s, whose @take writes every line) such a NUL line
 * is copied there unchanged, else it is ignored, and handed to @take as
 * HD_LINE_UNREAD. Returns 0, or -1 if a file could not be opened or read
 * (said; the others are read all the same).
 */
int hd_input__lines(char *const *files, int nfiles, hd_line_fn take, void *ctx, FILE *copy,
		    unsigned long *malformed);

/*
 * Stream @nfiles @files (as above) through the filter @ts, or through
 * @tr's lines into it (the tree form's stacks written after their
 * records, treescan.h): any line length, memory bounded by the trees of
 * one dump. Returns 0, or -1 if a file could not be opened or read (said;
 * the others are read all the same).
 */
int hd_input__scan(struct tokscan *ts, struct treescan *tr, char *const *files, int nfiles);

#endif /* HEAPDECODE_LOGREAD_H */

/* SPDX-License-Identifier: MIT */
/*
 * records.h - the one home of heapsnoop's record lines (docs/OUTPUT.md):
 * `dump`, `map`, `live`, `end-dump`, `exit`, `end-exit`, and the whole-run
 * accounting's `proc`, `stack` and `sample`, each written by
 * records__write() and read back by records__parse(), here and nowhere
 * else. heapsnoop writes them (report.c), heapdecode and the tests read
 * them; tests/test_records.c checks that what is written parses back to
 * the same values, tests/fuzz/fuzz_records.c that any line parses safely.
 *
 * A new record type: a value of enum record_type, its fields in struct
 * record, its keyword, writer and parser in records.c's three tables, its
 * grammar in docs/OUTPUT.md; every reader then parses it.
 */
#ifndef HEAPSNOOP_RECORDS_H
#define HEAPSNOOP_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "text.h"

/*
 * A `live` record's stack is incomplete (its cut= field, docs/OUTPUT.md):
 * the same bits as stacks.h's STACK_TRUNCATED and STACK_FAULT.
 */
#define REC_CUT_DEPTH		(1u << 0)	/* cut=depth: deeper than kept or copied */
#define REC_CUT_UNREADABLE	(1u << 1)	/* cut=unreadable: a frame not recovered */
#define REC_CUT_ALL		(REC_CUT_DEPTH | REC_CUT_UNREADABLE)

/* Every record line starts with this, anywhere in a line of a log. */
#define RECORDS_PREFIX "heapsnoop: "

enum record_type {
	REC_NONE,	/* no record keyword in the line */
	REC_DUMP,	/* dump reason= time= live= bytes= stacks= [sample-bytes=] */
	REC_MAP,	/* map pid= start= end= off= buildid= path= */
	REC_LIVE,	/* live pid= ptr= [cut=WHY] ~m#TOKEN (or size= unencodable: ERROR) */
	REC_END_DUMP,	/* end-dump live= */
	REC_EXIT,	/* exit pid= time= live= bytes= comm= */
	REC_END_EXIT,	/* end-exit pid= live= */
	REC_PROC,	/* proc pid= peak= peak_count= peak_time= allocs= allocated=
			 * frees= temporary= live= bytes= comm= */
	REC_STACK,	/* stack pid= allocs= allocated= frees= temporary= live=
			 * bytes= peak= peak_count= ~m#TOKEN */
	REC_SAMPLE,	/* sample pid= time= live= bytes= */
};

/*
 * One record's fields; which are used depends on the type (the comments
 * above). Strings that run to the end of the line (path, comm, error) and
 * the token point into the parsed line, or at the writer's caller's data.
 */
struct record {
	enum record_type type;
	int pid;			/* all but dump and end-dump */
	int64_t time_s;			/* dump, exit, sample: wall clock, seconds */
	uint32_t time_ms;		/* ... and milliseconds (0-999 written) */
	uint64_t live;			/* dump, end-dump, exit, end-exit, proc,
					 * stack, sample: count */
	uint64_t bytes;			/* dump, exit, proc, stack, sample: live bytes */
	/* proc, stack: whole-run counts since tracing began */
	uint64_t allocs, allocated, frees, temporary;
	/* proc: its peak live bytes and count; stack: its share at that peak */
	uint64_t peak, peak_count;
	int64_t peak_time_s;		/* proc: when (wall clock), seconds */
	uint32_t peak_time_ms;		/* ... and milliseconds */
	uint64_t stacks;		/* dump: unique stacks */
	uint64_t sample_bytes;		/* dump: the live set is a sample by bytes
					 * of this mean (sample-bytes=), 0: whole */
	char reason[16];		/* dump: exit, signal, usr1, interval */
	const char *comm;		/* exit, proc: name, to the end of line */
	uint64_t start, end, off;	/* map: [start, end), file offset of start */
	char build_id[BUILD_ID_HEX_SIZE];	/* map: hex, or "-" */
	const char *path;		/* map: to the end of the line */
	uint64_t ptr;			/* live: the allocation's address */
	uint32_t cut;			/* live: REC_CUT_* bits, 0: a complete stack */
	const char *token;		/* live, stack: "~m#..." (token_len bytes); live: or NULL: */
	size_t token_len;
	uint64_t size;			/* ... unencodable: its size in bytes */
	const char *error;		/* ... and why, to the end of the line */
};

/*
 * Write @r as one line (newline included) to @out, in docs/OUTPUT.md's
 * grammar. Returns 0, -EINVAL for a type with no line, -EIO if @out
 * failed.
 */
int records__write(FILE *out, const struct record *r);

/*
 * Find the first record in @line (one line, NUL-terminated, its newline
 * stripped or not) and parse its fields into @r. Strings in @r point into
 * @line. Returns 0; -ENOENT if @line holds no record keyword (r->type is
 * REC_NONE); -EINVAL if it holds one whose fields are malformed (r->type
 * names the keyword found, the fields are not to be used).
 */
int records__parse(const char *line, struct record *r);

#endif /* HEAPSNOOP_RECORDS_H */

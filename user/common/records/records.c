// SPDX-License-Identifier: MIT
/*
 * records.c - heapsnoop's record lines, written and parsed (see records.h;
 * grammar: docs/OUTPUT.md). Each type has one writer and one parser, side
 * by side; a parser reads the fields from just past "heapsnoop: KEYWORD ".
 * A writer's fields are checked before anything is written (check_*), so
 * a record the grammar cannot hold is refused whole, never half a line.
 * This file: the records of dumps, mappings, exits and the whole-run
 * accounting, and the table by type; a stack's tokens and the live record
 * are rectoken.c's, the frame and jit records rectext.c's, the tree and
 * node records and a record's node= rectree.c's, the ustack record
 * recustack.c's (records_int.h).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "records.h"
#include "records_int.h"

static const char *const keywords[] = {
	[REC_DUMP] = "dump ", [REC_MAP] = "map ", [REC_LIVE] = "live ",
	[REC_END_DUMP] = "end-dump ", [REC_EXIT] = "exit ", [REC_END_EXIT] = "end-exit ",
	[REC_PROC] = "proc ", [REC_STACK] = "stack ", [REC_SAMPLE] = "sample ",
	[REC_FRAME] = "frame ", [REC_JIT] = "jit ", [REC_TREE] = "tree ", [REC_NODE] = "node ",
	[REC_USTACK] = "ustack ",
};

#define NKEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

/* --- dump, end-dump ------------------------------------------------------ */

/* "time=S.MS live=N bytes=B", shared by dump and exit. */
static int write_tlb(FILE *out, const struct record *r)
{
	return fprintf(out, "time=%lld.%03u live=%" PRIu64 " bytes=%" PRIu64,
		       (long long)r->time_s, r->time_ms, r->live, r->bytes);
}

/* The same read at @p; returns the characters taken, or -EINVAL. */
static int parse_tlb(const char *p, struct record *r)
{
	unsigned long long live, bytes;
	long long sec;
	int n = 0;

	if (sscanf(p, "time=%lld.%3u live=%llu bytes=%llu%n", &sec, &r->time_ms, &live, &bytes,
		   &n) < 4 || !n || r->time_ms > 999)
		return -EINVAL;
	r->time_s = sec;
	r->live = live;
	r->bytes = bytes;
	return n;
}

static int write_dump(FILE *out, const struct record *r)
{
	if (fprintf(out, "dump reason=%s ", r->reason) < 0 || write_tlb(out, r) < 0)
		return -EIO;
	if (fprintf(out, " stacks=%" PRIu64, r->stacks) < 0)
		return -EIO;
	if (r->sample_bytes && fprintf(out, " sample-bytes=%" PRIu64, r->sample_bytes) < 0)
		return -EIO;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

static int parse_dump(const char *p, struct record *r)
{
	unsigned long long stacks, mean;
	int n = 0, k, m = 0, e = 0;

	if (sscanf(p, "reason=%15s %n", r->reason, &n) < 1 || !n)
		return -EINVAL;
	k = parse_tlb(p + n, r);
	if (k < 0 || sscanf(p + n + k, " stacks=%llu%n", &stacks, &m) != 1 || !m)
		return -EINVAL;
	r->stacks = stacks;
	p += n + k + m;
	/* sample-bytes=N: optional, never 0 (a whole live set has none). */
	if (!strncmp(p, " sample-bytes=", 14)) {
		if (!isdigit((unsigned char)p[14]) ||
		    sscanf(p, " sample-bytes=%llu%n", &mean, &e) != 1 || !e || !mean)
			return -EINVAL;
		r->sample_bytes = mean;
	}
	return 0;
}

static int write_end_dump(FILE *out, const struct record *r)
{
	return fprintf(out, "end-dump live=%" PRIu64 "\n", r->live);
}

static int parse_end_dump(const char *p, struct record *r)
{
	unsigned long long live;

	if (sscanf(p, "live=%llu", &live) != 1)
		return -EINVAL;
	r->live = live;
	return 0;
}

/* --- map ------------------------------------------------------------------ */

static int write_map(FILE *out, const struct record *r)
{
	return fprintf(out, "map pid=%d start=%#" PRIx64 " end=%#" PRIx64 " off=%#" PRIx64
		       " buildid=%s path=%s\n", r->pid, r->start, r->end, r->off, r->build_id,
		       r->path);
}

static int parse_map(const char *p, struct record *r)
{
	unsigned long long s, e, off;
	int n = 0;

	if (sscanf(p, "pid=%d start=%llx end=%llx off=%llx buildid=%128s path=%n", &r->pid,
		   &s, &e, &off, r->build_id, &n) < 5 || !n || e <= s)
		return -EINVAL;
	r->start = s;
	r->end = e;
	r->off = off;
	r->path = p + n;
	return 0;
}

/* --- exit, end-exit ------------------------------------------------------- */

/* " comm=NAME" at @p, exit's and proc's last field: NAME to the end. */
static int parse_comm(const char *p, struct record *r)
{
	int m = 0;

	if (sscanf(p, " comm=%n", &m) != 0 || !m)
		return -EINVAL;
	r->comm = p + m;
	return 0;
}

static int write_exit(FILE *out, const struct record *r)
{
	if (fprintf(out, "exit pid=%d ", r->pid) < 0 || write_tlb(out, r) < 0)
		return -EIO;
	return fprintf(out, " comm=%s\n", r->comm);
}

static int parse_exit(const char *p, struct record *r)
{
	int n = 0, k;

	if (sscanf(p, "pid=%d %n", &r->pid, &n) < 1 || !n)
		return -EINVAL;
	k = parse_tlb(p + n, r);
	return k < 0 ? -EINVAL : parse_comm(p + n + k, r);
}

static int write_end_exit(FILE *out, const struct record *r)
{
	return fprintf(out, "end-exit pid=%d live=%" PRIu64 "\n", r->pid, r->live);
}

static int parse_end_exit(const char *p, struct record *r)
{
	unsigned long long live;

	if (sscanf(p, "pid=%d live=%llu", &r->pid, &live) != 2)
		return -EINVAL;
	r->live = live;
	return 0;
}

/* --- proc, stack, sample: the whole-run accounting ------------------------ */

/* "allocs=N allocated=B frees=N temporary=N live=N bytes=B", both share. */
static int write_counts(FILE *out, const struct record *r)
{
	return fprintf(out, "allocs=%" PRIu64 " allocated=%" PRIu64 " frees=%" PRIu64
		       " temporary=%" PRIu64 " live=%" PRIu64 " bytes=%" PRIu64, r->allocs,
		       r->allocated, r->frees, r->temporary, r->live, r->bytes);
}

/* The same read at @p; returns the characters taken, or -EINVAL. */
static int parse_counts(const char *p, struct record *r)
{
	unsigned long long v[6];
	int n = 0;

	if (sscanf(p, "allocs=%llu allocated=%llu frees=%llu temporary=%llu live=%llu "
		   "bytes=%llu%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &n) < 6 || !n)
		return -EINVAL;
	r->allocs = v[0];
	r->allocated = v[1];
	r->frees = v[2];
	r->temporary = v[3];
	r->live = v[4];
	r->bytes = v[5];
	return n;
}

static int write_proc(FILE *out, const struct record *r)
{
	if (fprintf(out, "proc pid=%d peak=%" PRIu64 " peak_count=%" PRIu64
		    " peak_time=%lld.%03u ", r->pid, r->peak, r->peak_count,
		    (long long)r->peak_time_s, r->peak_time_ms) < 0 || write_counts(out, r) < 0 ||
	    (r->shed && fprintf(out, " shed=%" PRIu64, r->shed) < 0))
		return -EIO;
	return fprintf(out, " comm=%s\n", r->comm);
}

static int parse_proc(const char *p, struct record *r)
{
	unsigned long long peak, count;
	long long sec;
	int n = 0, k;

	if (sscanf(p, "pid=%d peak=%llu peak_count=%llu peak_time=%lld.%3u %n", &r->pid, &peak,
		   &count, &sec, &r->peak_time_ms, &n) < 5 || !n || r->peak_time_ms > 999)
		return -EINVAL;
	r->peak = peak;
	r->peak_count = count;
	r->peak_time_s = sec;
	k = parse_counts(p + n, r);
	if (k < 0)
		return -EINVAL;
	/* shed=N: that many of allocs= were samples while load was shed; never 0. */
	r->shed = 0;
	if (!strncmp(p + n + k, " shed=", 6)) {
		int m = rec_parse_u64(p + n + k + 6, &r->shed);

		if (m < 0 || !r->shed)
			return -EINVAL;
		k += 6 + m;
	}
	return parse_comm(p + n + k, r);
}

static int write_stack(FILE *out, const struct record *r)
{
	if (fprintf(out, "stack pid=%d ", r->pid) < 0 || write_counts(out, r) < 0 ||
	    fprintf(out, " peak=%" PRIu64 " peak_count=%" PRIu64, r->peak, r->peak_count) < 0 ||
	    rec_write_cut(out, r->cut & REC_CUT_ALL))
		return -EIO;
	return r->has_node ? rec_write_ref(out, r) : rec_write_tokens(out, r);
}

static int parse_stack(const char *p, struct record *r)
{
	unsigned long long peak, count;
	int n = 0, k, m = 0, c;

	if (sscanf(p, "pid=%d %n", &r->pid, &n) < 1 || !n)
		return -EINVAL;
	k = parse_counts(p + n, r);
	if (k < 0 || sscanf(p + n + k, " peak=%llu peak_count=%llu %n", &peak, &count, &m) < 2 ||
	    !m)
		return -EINVAL;
	r->peak = peak;
	r->peak_count = count;
	p += n + k + m;
	c = rec_parse_cut(p, &r->cut);
	if (c < 0)
		return -EINVAL;
	return strncmp(p + c, "node=", 5) ? rec_parse_tokens(p + c, r) : rec_parse_ref(p + c, r);
}

static int write_sample(FILE *out, const struct record *r)
{
	if (fprintf(out, "sample pid=%d ", r->pid) < 0 || write_tlb(out, r) < 0)
		return -EIO;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

static int parse_sample(const char *p, struct record *r)
{
	int n = 0;

	if (sscanf(p, "pid=%d %n", &r->pid, &n) < 1 || !n)
		return -EINVAL;
	return parse_tlb(p + n, r) < 0 ? -EINVAL : 0;
}

/* A decimal number of 32 bits at @p, digits only; the characters taken or -EINVAL. */
int rec_parse_u32(const char *p, uint32_t *v)
{
	uint64_t x = 0;
	int i = 0;

	for (; isdigit((unsigned char)p[i]); i++) {
		x = x * 10 + (uint64_t)(p[i] - '0');
		if (x > UINT32_MAX)
			return -EINVAL;
	}
	*v = (uint32_t)x;
	return i ? i : -EINVAL;
}

/* --- by type -------------------------------------------------------------- */

static int (*const writers[])(FILE *out, const struct record *r) = {
	[REC_DUMP] = write_dump, [REC_MAP] = write_map, [REC_LIVE] = rec_write_live,
	[REC_END_DUMP] = write_end_dump, [REC_EXIT] = write_exit,
	[REC_END_EXIT] = write_end_exit, [REC_PROC] = write_proc, [REC_STACK] = write_stack,
	[REC_SAMPLE] = write_sample, [REC_FRAME] = rec_write_frame, [REC_JIT] = rec_write_jit,
	[REC_TREE] = rec_write_tree, [REC_NODE] = rec_write_node, [REC_USTACK] = rec_write_ustack,
};

/* What a writer's fields must be before anything is written (NULL: any). */
static int (*const checkers[])(const struct record *r) = {
	[REC_LIVE] = rec_check_tokens, [REC_STACK] = rec_check_tokens, [REC_FRAME] = rec_check_frame,
	[REC_JIT] = rec_check_jit, [REC_TREE] = rec_check_tree, [REC_NODE] = rec_check_node,
	[REC_USTACK] = rec_check_ustack,
};

static int (*const parsers[])(const char *p, struct record *r) = {
	[REC_DUMP] = parse_dump, [REC_MAP] = parse_map, [REC_LIVE] = rec_parse_live,
	[REC_END_DUMP] = parse_end_dump, [REC_EXIT] = parse_exit,
	[REC_END_EXIT] = parse_end_exit, [REC_PROC] = parse_proc, [REC_STACK] = parse_stack,
	[REC_SAMPLE] = parse_sample, [REC_FRAME] = rec_parse_frame, [REC_JIT] = rec_parse_jit,
	[REC_TREE] = rec_parse_tree, [REC_NODE] = rec_parse_node, [REC_USTACK] = rec_parse_ustack,
};

int records__write(FILE *out, const struct record *r)
{
	if (r->type <= REC_NONE || r->type >= NKEYWORDS)
		return -EINVAL;
	if (r->type < sizeof(checkers) / sizeof(checkers[0]) && checkers[r->type] &&
	    checkers[r->type](r))
		return -EINVAL;
	if (fputs(RECORDS_PREFIX, out) == EOF || writers[r->type](out, r) < 0)
		return -EIO;
	return 0;
}

/* The record keyword at @p (just past the prefix), or REC_NONE. */
static enum record_type keyword_at(const char *p)
{
	for (size_t t = REC_NONE + 1; t < NKEYWORDS; t++)
		if (!strncmp(p, keywords[t], strlen(keywords[t])))
			return (enum record_type)t;
	return REC_NONE;
}

int records__parse(const char *line, struct record *r)
{
	const size_t plen = sizeof(RECORDS_PREFIX) - 1;

	memset(r, 0, sizeof(*r));
	for (const char *p = strstr(line, RECORDS_PREFIX); p; p = strstr(p + 1, RECORDS_PREFIX)) {
		r->type = keyword_at(p + plen);
		if (r->type != REC_NONE)
			return parsers[r->type](p + plen + strlen(keywords[r->type]), r);
	}
	return -ENOENT;
}

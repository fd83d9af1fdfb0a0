// SPDX-License-Identifier: MIT
/*
 * records.c - heapsnoop's record lines, written and parsed (see records.h;
 * grammar: docs/OUTPUT.md). Each type has one writer and one parser, side
 * by side; a parser reads the fields from just past "heapsnoop: KEYWORD ".
 * A writer's fields are checked before anything is written (check_*), so
 * a record the grammar cannot hold is refused whole, never half a line.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "records.h"

static const char *const keywords[] = {
	[REC_DUMP] = "dump ", [REC_MAP] = "map ", [REC_LIVE] = "live ",
	[REC_END_DUMP] = "end-dump ", [REC_EXIT] = "exit ", [REC_END_EXIT] = "end-exit ",
	[REC_PROC] = "proc ", [REC_STACK] = "stack ", [REC_SAMPLE] = "sample ",
	[REC_FRAME] = "frame ", [REC_JIT] = "jit ",
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

/* --- live ----------------------------------------------------------------- */

/* The words of cut=, one per REC_CUT_* bit, in bit order. */
static const char *const cut_words[] = { "depth", "unreadable", "order" };

#define NCUT (sizeof(cut_words) / sizeof(cut_words[0]))

/* " cut=depth,unreadable" for @cut's bits, nothing for 0. */
static int write_cut(FILE *out, uint32_t cut)
{
	const char *sep = " cut=";

	for (size_t i = 0; i < NCUT; i++) {
		if (!(cut & (1u << i)))
			continue;
		if (fprintf(out, "%s%s", sep, cut_words[i]) < 0)
			return -EIO;
		sep = ",";
	}
	return 0;
}

/* "cut=WORD[,WORD] " at @p into *@cut; returns the characters taken. */
static int parse_cut(const char *p, uint32_t *cut)
{
	const char *q = p + 4;

	*cut = 0;
	if (strncmp(p, "cut=", 4))
		return 0;
	for (;;) {
		size_t i, n = strcspn(q, ", ");

		for (i = 0; i < NCUT; i++)
			if (n == strlen(cut_words[i]) && !strncmp(q, cut_words[i], n))
				break;
		if (i == NCUT || (*cut & (1u << i)))
			return -EINVAL;	/* an unknown or repeated word */
		*cut |= 1u << i;
		q += n;
		if (*q != ',')
			break;
		q++;
	}
	if (*q != ' ')
		return -EINVAL;
	return (int)(q + 1 - p);
}

/*
 * The run of tokens at @p ("~m#A[ ~m#B...]": a token is "~m#" and what
 * follows it up to a blank, tokens are one space apart), at most @max
 * characters: its length in *@len; returns how many tokens, 0 if @p is
 * not a token.
 */
static uint32_t token_run(const char *p, size_t max, size_t *len)
{
	uint32_t n = 0;
	size_t i = 0;

	*len = 0;
	while (max - i >= 3 && !strncmp(p + i, "~m#", 3)) {
		n++;
		i += 3;
		while (i < max && p[i] && !strchr(" \t\r\n", p[i]))
			i++;
		*len = i;
		if (max - i < 4 || p[i] != ' ')
			break;
		i++;
	}
	return n;
}

/* The tokens a stack of @depth (depth=, 0: none) frames takes. */
static uint32_t tokens_for(uint32_t depth)
{
	return depth ? (depth + HS_MAX_DEPTH - 1) / HS_MAX_DEPTH : 1;
}

/* Is depth= @depth one the grammar has: none, or deeper than one token holds? */
static bool depth_ok(uint32_t depth)
{
	return !depth || (depth > HS_MAX_DEPTH && depth <= REC_MAX_DEPTH);
}

/*
 * A record's tokens: a run of exactly as many as its depth= needs, the
 * first in token, the others there too or apart in tail.
 */
static int check_tokens(const struct record *r)
{
	size_t len, tlen = 0;
	uint32_t n;

	if (!r->token)
		return r->type == REC_LIVE && !r->depth && !r->tail ? 0 : -EINVAL;
	if (!depth_ok(r->depth))
		return -EINVAL;
	n = token_run(r->token, r->token_len, &len);
	if (len != r->token_len)
		return -EINVAL;
	if (r->tail) {
		if (r->tail_len < 4 || r->tail[0] != ' ')
			return -EINVAL;
		n += token_run(r->tail + 1, r->tail_len - 1, &tlen);
		if (tlen != r->tail_len - 1)
			return -EINVAL;
	}
	return n == tokens_for(r->depth) ? 0 : -EINVAL;
}

/* " depth=N" if @depth, then " " and the tokens. */
static int write_tokens(FILE *out, const struct record *r)
{
	if (r->depth && fprintf(out, " depth=%u", r->depth) < 0)
		return -EIO;
	if (fprintf(out, " %.*s", (int)r->token_len, r->token) < 0 ||
	    (r->tail && fwrite(r->tail, 1, r->tail_len, out) != r->tail_len))
		return -EIO;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

/*
 * "[depth=N ]~m#A[ ~m#B...]" at @p into @r: the number of tokens must be
 * depth='s (one without it). Returns 0, or -EINVAL.
 */
static int parse_u32(const char *p, uint32_t *v);

static int parse_tokens(const char *p, struct record *r)
{
	uint32_t depth;
	int n;

	r->depth = 0;
	if (!strncmp(p, "depth=", 6)) {
		n = parse_u32(p + 6, &depth);
		if (n < 0 || p[6 + n] != ' ' || !depth || !depth_ok(depth))
			return -EINVAL;
		r->depth = depth;
		p += 6 + n + 1;
	}
	r->token = p;
	r->ntokens = token_run(p, strlen(p), &r->token_len);
	return r->ntokens && r->ntokens == tokens_for(r->depth) ? 0 : -EINVAL;
}

static int write_live(FILE *out, const struct record *r)
{
	if (fprintf(out, "live pid=%d ptr=%#" PRIx64, r->pid, r->ptr) < 0 ||
	    write_cut(out, r->cut & REC_CUT_ALL))
		return -EIO;
	/* Only a size >= 2^63 has no token; say so, never guess. */
	if (!r->token)
		return fprintf(out, " size=%" PRIu64 " unencodable: %s\n", r->size, r->error);
	return write_tokens(out, r);
}

static int parse_live(const char *p, struct record *r)
{
	unsigned long long ptr, size;
	int n = 0, m = 0, c;

	if (sscanf(p, "pid=%d ptr=%llx %n", &r->pid, &ptr, &n) < 2 || !n)
		return -EINVAL;
	r->ptr = ptr;
	p += n;
	c = parse_cut(p, &r->cut);
	if (c < 0)
		return -EINVAL;
	p += c;
	if (strncmp(p, "size=", 5))
		return parse_tokens(p, r);
	if (sscanf(p, "size=%llu unencodable: %n", &size, &m) < 1 || !m)
		return -EINVAL;
	r->size = size;
	r->error = p + m;
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
		    (long long)r->peak_time_s, r->peak_time_ms) < 0 || write_counts(out, r) < 0)
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
	return k < 0 ? -EINVAL : parse_comm(p + n + k, r);
}

static int write_stack(FILE *out, const struct record *r)
{
	if (fprintf(out, "stack pid=%d ", r->pid) < 0 || write_counts(out, r) < 0 ||
	    fprintf(out, " peak=%" PRIu64 " peak_count=%" PRIu64, r->peak, r->peak_count) < 0 ||
	    write_cut(out, r->cut & REC_CUT_ALL))
		return -EIO;
	return write_tokens(out, r);
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
	c = parse_cut(p, &r->cut);
	if (c < 0)
		return -EINVAL;
	return parse_tokens(p + c, r);
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

/* --- frame, jit: frames that are not native code ------------------------- */

static const char hexdig[] = "0123456789ABCDEF";

/* A text byte written as it is: printable ASCII but '%' (and no blank). */
static bool text_plain(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '%';
}

/* " NAME=" and @s escaped: "-" for none, "%2D" for "-" itself. */
static int write_text(FILE *out, const char *name, const char *s)
{
	if (fprintf(out, " %s=", name) < 0)
		return -EIO;
	if (!s || !*s)
		return fputc('-', out) == EOF ? -EIO : 0;
	if (!strcmp(s, "-"))
		return fputs("%2D", out) == EOF ? -EIO : 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (text_plain(*c) ? putc(*c, out) == EOF :
		    fprintf(out, "%%%c%c", hexdig[*c >> 4], hexdig[*c & 15]) < 0)
			return -EIO;
	}
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * An escaped text at @p into @t: printable ASCII up to a blank or the end,
 * each '%' two hex digits but "%00", at most @max bytes decoded. Returns
 * the characters taken, or -EINVAL.
 */
static int parse_text(const char *p, size_t max, struct rec_text *t)
{
	size_t i = 0, bytes = 0;

	while (p[i] > 0x20 && p[i] < 0x7f) {
		if (p[i] == '%') {
			if (hexval(p[i + 1]) < 0 || hexval(p[i + 2]) < 0 ||
			    (p[i + 1] == '0' && p[i + 2] == '0'))
				return -EINVAL;
			i += 2;
		}
		i++;
		bytes++;
	}
	if (!i || bytes > max)
		return -EINVAL;
	*t = (struct rec_text){ p, i };
	return (int)i;
}

int records__text(const struct rec_text *t, char *out, size_t cap)
{
	size_t n = 0, len = t->len == 1 && t->s[0] == '-' ? 0 : t->len;

	for (size_t i = 0; i < len; i++, n++) {
		if (n + 1 >= cap)
			return -ENOSPC;
		if (t->s[i] == '%') {
			out[n] = (char)(hexval(t->s[i + 1]) << 4 | hexval(t->s[i + 2]));
			i += 2;
		} else {
			out[n] = t->s[i];
		}
	}
	if (!cap)
		return -ENOSPC;
	out[n] = '\0';
	return (int)n;
}

/*
 * An interpreter's name: [a-z][a-z0-9_]*, at most REC_KIND_MAX; not "jit"
 * (JIT code is named by `jit` records, its kind in every report).
 */
static bool kind_ok(const char *k)
{
	size_t n = strlen(k);

	if (!n || n > REC_KIND_MAX || !islower((unsigned char)k[0]) || !strcmp(k, "jit"))
		return false;
	return strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* A text the grammar holds: at most @max bytes (none is "-"). */
static bool text_ok(const char *s, size_t max)
{
	return !s || strlen(s) <= max;
}

static int check_frame(const struct record *r)
{
	if (!rec_is_frame_addr(r->addr) || !kind_ok(r->kind) ||
	    !text_ok(r->file, REC_FILE_MAX) || !text_ok(r->function, REC_NAME_MAX))
		return -EINVAL;
	return 0;
}

static int write_frame(FILE *out, const struct record *r)
{
	if (fprintf(out, "frame pid=%d addr=%#" PRIx64 " kind=%s line=%" PRIu32, r->pid, r->addr,
		    r->kind, r->line) < 0 || write_text(out, "file", r->file) ||
	    write_text(out, "function", r->function))
		return -EIO;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

/* A decimal number of 32 bits at @p, digits only; the characters taken or -EINVAL. */
static int parse_u32(const char *p, uint32_t *v)
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

/* The end of a record's last text: the end of the line, or a blank. */
static bool at_end(const char *p)
{
	return !*p || *p == ' ' || *p == '\t' || *p == '\r';
}

static int parse_frame(const char *p, struct record *r)
{
	unsigned long long addr;
	int n = 0, k;

	if (sscanf(p, "pid=%d addr=%llx kind=%15[a-z0-9_] line=%n", &r->pid, &addr, r->kind,
		   &n) < 3 || !n || !kind_ok(r->kind) || !rec_is_frame_addr(addr))
		return -EINVAL;
	r->addr = addr;
	p += n;
	if ((k = parse_u32(p, &r->line)) < 0 || strncmp(p += k, " file=", 6))
		return -EINVAL;
	if ((k = parse_text(p += 6, REC_FILE_MAX, &r->file_esc)) < 0 ||
	    strncmp(p += k, " function=", 10))
		return -EINVAL;
	if ((k = parse_text(p += 10, REC_NAME_MAX, &r->function_esc)) < 0 || !at_end(p + k))
		return -EINVAL;
	return 0;
}

/* A JIT range: user-space code, below the synthetic frames' addresses. */
static bool jit_range_ok(uint64_t start, uint64_t end)
{
	return start < end && end <= REC_FRAME_BASE;
}

static int check_jit(const struct record *r)
{
	return jit_range_ok(r->start, r->end) && text_ok(r->function, REC_NAME_MAX) ? 0 : -EINVAL;
}

static int write_jit(FILE *out, const struct record *r)
{
	if (fprintf(out, "jit pid=%d start=%#" PRIx64 " end=%#" PRIx64, r->pid, r->start,
		    r->end) < 0 || write_text(out, "name", r->function))
		return -EIO;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

static int parse_jit(const char *p, struct record *r)
{
	unsigned long long s, e;
	int n = 0, k;

	if (sscanf(p, "pid=%d start=%llx end=%llx name=%n", &r->pid, &s, &e, &n) < 3 || !n ||
	    !jit_range_ok(s, e))
		return -EINVAL;
	r->start = s;
	r->end = e;
	if ((k = parse_text(p + n, REC_NAME_MAX, &r->function_esc)) < 0 || !at_end(p + n + k))
		return -EINVAL;
	return 0;
}

/* --- a stack in tokens ------------------------------------------------------ */

int records__tail_tokens(const uint64_t *frames, uint32_t depth, char *out, size_t cap)
{
	size_t pos = 0;

	if (depth > REC_MAX_DEPTH)
		return -HS_EDEPTH;
	if (cap)
		out[0] = '\0';
	for (uint32_t i = HS_MAX_DEPTH; i < depth; i += HS_MAX_DEPTH) {
		struct hs_record rec = { .size = 0, .depth = depth - i };
		int n;

		if (rec.depth > HS_MAX_DEPTH)
			rec.depth = HS_MAX_DEPTH;
		memcpy(rec.frames, frames + i, rec.depth * sizeof(*frames));
		if (cap - pos < 2)
			return -HS_ENOSPC;
		out[pos] = ' ';
		n = hs_token_encode(&rec, out + pos + 1, cap - pos - 1);
		if (n < 0)
			return n;
		pos += 1 + (size_t)n;
	}
	return (int)pos;
}

int records__tokens(const uint64_t *frames, uint32_t depth, uint64_t size, char *out,
		    size_t cap)
{
	struct hs_record rec = { .size = size, .depth = depth };
	int n, m;

	if (depth > REC_MAX_DEPTH)
		return -HS_EDEPTH;
	if (rec.depth > HS_MAX_DEPTH)
		rec.depth = HS_MAX_DEPTH;
	memcpy(rec.frames, frames, rec.depth * sizeof(*frames));
	n = hs_token_encode(&rec, out, cap);
	if (n < 0)
		return n;
	m = records__tail_tokens(frames, depth, out + n, cap - (size_t)n);
	return m < 0 ? m : n + m;
}

int records__stack(const struct record *r, uint64_t *size, uint64_t *frames, uint32_t *depth)
{
	const char *p = r->token, *end = r->token + r->token_len;
	struct hs_record rec;
	uint32_t k = 0;

	*depth = 0;
	*size = 0;
	if (!r->token || r->token_len < 3)
		return -HS_ERECORD;
	for (uint32_t t = 0; p < end; t++) {
		const char *e = memchr(p, ' ', (size_t)(end - p));
		int err;

		if (!e)
			e = end;
		if (e - p < 3 || strncmp(p, "~m#", 3))
			return t ? HS_ECONT : -HS_ERECORD;
		err = hs_token_decode(p + 3, (size_t)(e - p - 3), &rec);
		if (err)
			return t ? -err : err;
		/* A continuation: size 0, after a token of 31 frames. */
		if (t && (rec.size || k % HS_MAX_DEPTH || !k))
			return HS_ECONT;
		if (k + rec.depth > REC_MAX_DEPTH || (t && !r->depth))
			return HS_EDEPTHSUM;
		if (!t)
			*size = rec.size;
		memcpy(frames + k, rec.frames, rec.depth * sizeof(*frames));
		*depth = k += rec.depth;
		p = e + 1;
	}
	return r->depth && k != r->depth ? HS_EDEPTHSUM : 0;
}

/* --- by type -------------------------------------------------------------- */

static int (*const writers[])(FILE *out, const struct record *r) = {
	[REC_DUMP] = write_dump, [REC_MAP] = write_map, [REC_LIVE] = write_live,
	[REC_END_DUMP] = write_end_dump, [REC_EXIT] = write_exit,
	[REC_END_EXIT] = write_end_exit, [REC_PROC] = write_proc, [REC_STACK] = write_stack,
	[REC_SAMPLE] = write_sample, [REC_FRAME] = write_frame, [REC_JIT] = write_jit,
};

/* What a writer's fields must be before anything is written (NULL: any). */
static int (*const checkers[])(const struct record *r) = {
	[REC_LIVE] = check_tokens, [REC_STACK] = check_tokens, [REC_FRAME] = check_frame,
	[REC_JIT] = check_jit,
};

static int (*const parsers[])(const char *p, struct record *r) = {
	[REC_DUMP] = parse_dump, [REC_MAP] = parse_map, [REC_LIVE] = parse_live,
	[REC_END_DUMP] = parse_end_dump, [REC_EXIT] = parse_exit,
	[REC_END_EXIT] = parse_end_exit, [REC_PROC] = parse_proc, [REC_STACK] = parse_stack,
	[REC_SAMPLE] = parse_sample, [REC_FRAME] = parse_frame, [REC_JIT] = parse_jit,
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

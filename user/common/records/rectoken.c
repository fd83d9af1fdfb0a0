// SPDX-License-Identifier: MIT
/*
 * rectoken.c - a stack in record lines (see records.h; grammar:
 * docs/OUTPUT.md, the continuation tokens docs/FORMAT.md): cut=, depth=
 * and the run of ~m# tokens that live and stack records end with, the
 * live record itself, and a stack's frames turned into tokens and back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "records.h"
#include "records_int.h"

/* --- live ----------------------------------------------------------------- */

/* The words of cut=, one per REC_CUT_* bit, in bit order. */
static const char *const cut_words[] = { "depth", "unreadable", "order" };

#define NCUT (sizeof(cut_words) / sizeof(cut_words[0]))

/* " cut=depth,unreadable" for @cut's bits, nothing for 0. */
int rec_write_cut(FILE *out, uint32_t cut)
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
int rec_parse_cut(const char *p, uint32_t *cut)
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
int rec_check_tokens(const struct record *r)
{
	size_t len, tlen = 0;
	uint32_t n;

	/* Or the stack as a node of its process's tree: no token then. */
	if (r->has_node)
		return r->token || r->tail || r->depth ? -EINVAL : 0;
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
int rec_write_tokens(FILE *out, const struct record *r)
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
int rec_parse_tokens(const char *p, struct record *r)
{
	uint32_t depth;
	int n;

	r->depth = 0;
	if (!strncmp(p, "depth=", 6)) {
		n = rec_parse_u32(p + 6, &depth);
		if (n < 0 || p[6 + n] != ' ' || !depth || !depth_ok(depth))
			return -EINVAL;
		r->depth = depth;
		p += 6 + n + 1;
	}
	r->token = p;
	r->ntokens = token_run(p, strlen(p), &r->token_len);
	return r->ntokens && r->ntokens == tokens_for(r->depth) ? 0 : -EINVAL;
}

int rec_write_live(FILE *out, const struct record *r)
{
	if (fprintf(out, "live pid=%d ptr=%#" PRIx64, r->pid, r->ptr) < 0 ||
	    rec_write_cut(out, r->cut & REC_CUT_ALL) ||
	    (r->shed && fprintf(out, " shed=%" PRIu64, r->shed) < 0))
		return -EIO;
	if (r->has_node)
		return rec_write_ref(out, r);
	/* Only a size >= 2^63 has no token; say so, never guess. */
	if (!r->token)
		return fprintf(out, " size=%" PRIu64 " unencodable: %s\n", r->size, r->error);
	return rec_write_tokens(out, r);
}

int rec_parse_live(const char *p, struct record *r)
{
	unsigned long long ptr, size;
	int n = 0, m = 0, c;

	if (sscanf(p, "pid=%d ptr=%llx %n", &r->pid, &ptr, &n) < 2 || !n)
		return -EINVAL;
	r->ptr = ptr;
	p += n;
	c = rec_parse_cut(p, &r->cut);
	if (c < 0)
		return -EINVAL;
	p += c;
	/* shed=M: a sample of mean M (sampling.h), never 0. */
	r->shed = 0;
	if (!strncmp(p, "shed=", 5)) {
		c = rec_parse_u64(p + 5, &r->shed);
		if (c < 0 || !r->shed || p[5 + c] != ' ')
			return -EINVAL;
		p += 5 + c + 1;
	}
	if (strncmp(p, "size=", 5))
		return rec_parse_tokens(p, r);
	if (!strstr(p, " unencodable: "))
		return rec_parse_ref(p, r);
	if (sscanf(p, "size=%llu unencodable: %n", &size, &m) < 1 || !m)
		return -EINVAL;
	r->size = size;
	r->error = p + m;
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

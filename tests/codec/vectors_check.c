// SPDX-License-Identifier: MIT
/*
 * vectors_check.c - the format's test vectors checked from a buffer
 * (tests/codec/vectors_check.h): test_codec's test_vectors without
 * cmocka, stdio or the heap, for 32-bit targets.
 */
#include <stdint.h>
#include <string.h>

#include "heapsnoop/codec.h"
#include "vectors_check.h"

/* A number in base @base at *@p, up to @end or a space; moves *@p past it. */
static int parse_num(const char **p, const char *end, unsigned int base, uint64_t *v)
{
	const char *s = *p;

	if (base == 16) {
		if (end - s < 3 || s[0] != '0' || s[1] != 'x')
			return -1;
		s += 2;
	}
	*v = 0;
	if (s == end || *s == ' ')
		return -1;
	for (; s < end && *s != ' '; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else
			return -1;
		if (d >= base || *v > (UINT64_MAX - d) / base)
			return -1;
		*v = *v * base + d;
	}
	*p = s;
	return 0;
}

/* Column 1: the decimal size, then the hex frames. */
static int parse_input(const char *s, const char *end, struct hs_record *rec)
{
	if (parse_num(&s, end, 10, &rec->size))
		return -1;
	rec->depth = 0;
	while (s < end) {
		if (*s++ != ' ' || rec->depth == HS_MAX_DEPTH ||
		    parse_num(&s, end, 16, &rec->frames[rec->depth++]))
			return -1;
	}
	return 0;
}

/* "vector N: WHAT", said. */
static void fail(vectors_say_fn say, void *arg, unsigned int n, const char *what)
{
	char text[96] = "vector ";
	char num[12];
	size_t k = 0, at = strlen(text);

	do {
		num[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	while (k)
		text[at++] = num[--k];
	text[at] = '\0';
	strncat(text, ": ", sizeof(text) - strlen(text) - 1);
	strncat(text, what, sizeof(text) - strlen(text) - 1);
	say(arg, text);
}

/* One line: "" if it is exact, else what is wrong. */
static const char *check_line(const char *line, const char *end)
{
	const char *t1 = memchr(line, '\t', (size_t)(end - line));
	const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(end - t1 - 1)) : NULL;
	struct hs_record rec, back;
	char out[HS_TOKEN_BUF], bout[HS_BLINE_BUF];
	size_t tok_len, bl_len;
	int n;

	if (!t2 || parse_input(line, t1, &rec))
		return "not a vector";
	tok_len = (size_t)(t2 - t1 - 1);
	bl_len = (size_t)(end - t2 - 1);
	n = hs_token_encode(&rec, out, sizeof(out));
	if (n < 0 || (size_t)n != tok_len || memcmp(out, t1 + 1, tok_len))
		return "encode differs from column 2";
	if (tok_len < 3 || hs_token_decode(t1 + 4, tok_len - 3, &back))
		return "column 2 does not decode";
	n = hs_bline_format(&back, bout, sizeof(bout));
	if (n < 0 || (size_t)n != bl_len || memcmp(bout, t2 + 1, bl_len))
		return "decode differs from column 3";
	if (bl_len < 3 || hs_bline_parse(t2 + 4, bl_len - 3, &back) != (int)(bl_len - 3) ||
	    back.size != rec.size || back.depth != rec.depth ||
	    memcmp(back.frames, rec.frames, rec.depth * sizeof(rec.frames[0])))
		return "column 3 does not parse back to column 1";
	return "";
}

unsigned int vectors_check(const char *tsv, size_t len, vectors_say_fn say, void *arg,
			   unsigned int *lines)
{
	const char *p = tsv, *end = tsv + len;
	unsigned int bad = 0;

	*lines = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *what;

		if (eol > p) {
			++*lines;
			what = check_line(p, eol);
			if (*what) {
				bad++;
				fail(say, arg, *lines, what);
			}
		}
		p = eol + 1;
	}
	return bad;
}

// SPDX-License-Identifier: MIT
/*
 * bline.c - the decoded form `~b#size: N, 0x.. 0x..` that addr2line loops
 * read: format it exactly as the reference does (minus its trailing space),
 * and parse it back, with or without that trailing space.
 */
#include <string.h>

#include "heapsnoop/codec.h"

static const char hexdig[16] = "0123456789abcdef";

/* Lower-case hex of @v without leading zeros into @o; returns the length. */
static size_t put_hex(char *o, uint64_t v)
{
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;

	for (size_t i = n; i-- > 0; v >>= 4)
		o[i] = hexdig[v & 15];
	return n;
}

static size_t put_dec(char *o, uint64_t v)
{
	size_t n = 1;

	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	for (size_t i = n; i-- > 0; v /= 10)
		o[i] = (char)('0' + v % 10);
	return n;
}

int hs_bline_format(const struct hs_record *rec, char *out, size_t cap)
{
	char *o = out;

	if (rec->depth > HS_MAX_DEPTH)
		return -HS_EDEPTH;
	/* Worst case for this record: every frame 16 hex digits. */
	if (cap < 3 + 6 + 20 + 2 + (size_t)rec->depth * 19 + 1)
		return -HS_ENOSPC;
	memcpy(o, "~b#size: ", 9);
	o += 9;
	o += put_dec(o, rec->size);
	*o++ = ',';
	*o++ = ' ';
	for (uint32_t i = 0; i < rec->depth; i++) {
		if (i)
			*o++ = ' ';
		*o++ = '0';
		*o++ = 'x';
		o += put_hex(o, rec->frames[i]);
	}
	*o = '\0';
	return (int)(o - out);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hs_bline_parse(const char *s, size_t len, struct hs_record *rec)
{
	size_t i = 6, start;
	uint64_t v = 0;

	if (len < 6 || memcmp(s, "size: ", 6))
		return -HS_ESYNTAX;
	start = i;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -HS_ERANGE;
		v = v * 10 + d;
	}
	if (i == start || len - i < 2 || s[i] != ',' || s[i + 1] != ' ')
		return -HS_ESYNTAX;
	rec->size = v;
	rec->depth = 0;
	i += 2;

	/* Frames: "0x<hex>" separated by single spaces. */
	while (len - i >= 3 && s[i] == '0' && s[i + 1] == 'x' && hexval(s[i + 2]) >= 0) {
		if (rec->depth == HS_MAX_DEPTH)
			return -HS_EDEPTH;
		v = 0;
		for (i += 2; i < len && hexval(s[i]) >= 0; i++) {
			if (v >> 60)
				return -HS_ERANGE;
			v = v << 4 | (uint64_t)hexval(s[i]);
		}
		rec->frames[rec->depth++] = v;
		if (i + 1 < len && s[i] == ' ' && s[i + 1] == '0')
			i++;
		else
			break;
	}
	return (int)i;
}

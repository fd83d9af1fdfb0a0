// SPDX-License-Identifier: MIT
/*
 * recconv.c - the two record conversions heapdecode streams text through:
 * `~m#TOKEN` -> `~b#size: N, 0x..` and back (format: docs/FORMAT.md).
 */
#include <stdio.h>

#include "heapsnoop/codec.h"
#include "recconv.h"

static int convert_m(void *ctx, const char *tok, size_t len, FILE *out)
{
	struct hs_record rec;
	char line[HS_BLINE_BUF];
	int err, n;

	(void)ctx;
	err = hs_token_decode(tok, len, &rec);
	if (err)
		return err;
	n = hs_bline_format(&rec, line, sizeof(line));
	if (n < 0)
		return n;
	fwrite_unlocked(line, 1, (size_t)n, out);
	return (int)len;
}

static int convert_b(void *ctx, const char *tok, size_t len, FILE *out)
{
	struct hs_record rec;
	char token[HS_TOKEN_BUF];
	int used, n;

	(void)ctx;
	used = hs_bline_parse(tok, len, &rec);
	if (used < 0)
		return used;
	n = hs_token_encode(&rec, token, sizeof(token));
	if (n < 0)
		return n;
	fwrite_unlocked(token, 1, (size_t)n, out);
	return used;
}

/* Characters a `~b#` record is made of ("size: 12, 0x4a 0xff"). */
static int is_bline_char(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F') || c == 'x' || c == 's' || c == 'i' ||
	       c == 'z' || c == ':' || c == ',' || c == ' ';
}

const struct tokscan_ops recconv_decode_ops = {
	.leadin = "~m#",
	.what = "~m# record",
	.is_tok_char = hs_is_base64_char,
	.max_len = HS_BASE64_MAX + 1,
	.convert = convert_m,
	.bare_lines = true,
};

const struct tokscan_ops recconv_encode_ops = {
	.leadin = "~b#",
	.what = "~b# record",
	.is_tok_char = is_bline_char,
	.max_len = HS_BLINE_BUF + 64,
	.convert = convert_b,
	.bare_lines = false,
};


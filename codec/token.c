// SPDX-License-Identifier: MIT
/*
 * token.c - `~m#<base64>` tokens: encode a record to one, decode one, and
 * find them in arbitrary text (log lines with timestamps, pids, ...).
 */
#include <string.h>

#include "heapsnoop/codec.h"

int hs_token_encode(const struct hs_record *rec, char *out, size_t cap)
{
	struct hs_stack_bits sb;
	int err;

	if (rec->size > HS_MAX_VALUE)
		return -HS_ERANGE;
	err = hs_stack_bits_encode(rec->frames, rec->depth, &sb);
	return err ? err : hs_token_encode_stack(&sb, rec->size, out, cap);
}

int hs_token_decode(const char *b64, size_t len, struct hs_record *rec)
{
	uint8_t blob[HS_BLOB_MAX];
	int n;

	if (len > HS_BASE64_MAX)
		return -HS_ETOOLONG;
	n = hs_base64_decode(b64, len, blob, sizeof(blob));
	if (n < 0)
		return n == -HS_ENOSPC ? -HS_ETOOLONG : n;
	return hs_blob_decode(blob, (size_t)n, rec);
}

const char *hs_token_find(const char *s, size_t len, size_t *tok_len)
{
	const char *end = s + len, *p = s;

	while ((p = memchr(p, '~', (size_t)(end - p))) != NULL) {
		if (end - p >= 3 && p[1] == 'm' && p[2] == '#') {
			const char *t = p + 3, *e = t;

			while (e < end && hs_is_base64_char(*e))
				e++;
			*tok_len = (size_t)(e - t);
			return t;
		}
		p++;
	}
	return NULL;
}

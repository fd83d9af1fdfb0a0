/* SPDX-License-Identifier: MIT */
/*
 * codec.h - the compressed backtrace format of libwebsockets' lws_backtrace
 * (`~m#<base64>` / `~b#size: N, 0x... 0x...`), bit-exact with the reference
 * encoder for values below 2^31 and 64-bit clean above it.
 *
 * Format: docs/FORMAT.md (a copy of the project spec, shared/codec/FORMAT.md).
 * No dependency beyond libc; safe on untrusted input (never reads past the
 * lengths it is given, never writes past the capacities it is given).
 */
#ifndef HEAPSNOOP_CODEC_H
#define HEAPSNOOP_CODEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest stack a record can hold: the depth field is 5 bits. */
#define HS_MAX_DEPTH 31
/* Every value (frame, delta, size) must be below 2^63: a 6-bit count. */
#define HS_MAX_VALUE ((uint64_t)INT64_MAX)
/* The 16-bit trailer bounds a blob. */
#define HS_BLOB_MAX 65535
/* A 31-frame record of 63-bit values fits in this many blob bytes. */
#define HS_BLOB_BUF 320
/* Longest `~m#` token (lead-in + base64 + NUL) for any valid record. */
#define HS_TOKEN_BUF (3 + (HS_BLOB_BUF + 2) / 3 * 4 + 1)
/* Longest `~b#` line (lead-in, size, 31 frames, NUL) for any record. */
#define HS_BLINE_BUF (3 + 6 + 20 + 2 + HS_MAX_DEPTH * 19 + 1)
/* Longest base64 text a valid blob can have: 4 * ceil(65535 / 3). */
#define HS_BASE64_MAX (4 * ((HS_BLOB_MAX + 2) / 3))

/* One allocation record: its size and its stack, innermost frame first. */
struct hs_record {
	uint64_t size;			/* bytes */
	uint32_t depth;			/* 0..HS_MAX_DEPTH */
	uint64_t frames[HS_MAX_DEPTH];	/* return addresses, call site first */
};

/*
 * Errors. Every function returns 0 or a positive count on success and the
 * negative of one of these on failure; hs_strerror() names it.
 *
 * One error space with errno: the codes start above HS_ERR_BASE, past every
 * errno value (the kernel's MAX_ERRNO is 4095), so a caller may return
 * either a negative errno or a negative hs_err through one int and
 * hs_strerror() names both.
 */
#define HS_ERR_BASE 4096

enum hs_err {
	HS_OK = 0,
	HS_EDEPTH = HS_ERR_BASE + 1,	/* depth above HS_MAX_DEPTH */
	HS_ERANGE,		/* a value at or above 2^63 */
	HS_ENOSPC,		/* output buffer too small */
	HS_EBASE64,		/* not valid base64 */
	HS_ESHORT,		/* blob shorter than 3 bytes */
	HS_ETRAILER,		/* trailer does not equal the blob length */
	HS_ETRUNC,		/* bitstream ends inside a field */
	HS_EDELTA0,		/* delta in frame 0 */
	HS_EDELTAREF,		/* delta reaches before frame 0 */
	HS_EOVERFLOW,		/* a delta takes a frame outside 0..2^63-1 */
	HS_EPADDING,		/* non-zero bits or whole bytes after the record */
	HS_ESYNTAX,		/* a `~b#` line that does not parse */
	HS_ETOOLONG,		/* token longer than any valid record */
	/*
	 * heapsnoop's record lines (user/common/records/, docs/OUTPUT.md),
	 * reported by its readers alike: a record of more than one token.
	 */
	HS_ECONT,		/* a continuation token with a size, or a short one before the last */
	HS_EDEPTHSUM,		/* the tokens' frames are not the record's depth= */
	HS_ERECORD,		/* a `live` or `stack` record whose fields are malformed */
	HS_ENODE,		/* a record's node= that no `tree` before it defines */
	HS_ETREE,		/* a `node` record that does not fit its `tree` */
	HS__ERR_MAX,
};

/*
 * hs_strerror - text for @err: an hs_err or an errno value, negative or
 * positive (0: "success"); "unknown error" for neither. Never NULL.
 */
const char *hs_strerror(int err);

/*
 * hs_blob_encode - compress @rec into @out (bitstream + 2-byte trailer).
 * Byte-identical to the reference encoder's choice of literal and delta.
 * Returns the blob length in bytes; -HS_EDEPTH for depth > 31, -HS_ERANGE for
 * any frame or size >= 2^63, -HS_ENOSPC if @cap is too small (HS_BLOB_BUF
 * always suffices).
 */
int hs_blob_encode(const struct hs_record *rec, uint8_t *out, size_t cap);

/*
 * A stack's part of a blob (depth and frames), encoded once and reused for
 * every allocation made from that stack: only the size field differs.
 */
struct hs_stack_bits {
	uint32_t nbits;
	uint8_t bits[HS_BLOB_BUF];	/* readers use only (nbits + 7) / 8 */
};

/*
 * hs_stack_bits_encode - the depth and @depth frames of a record as bits.
 * Returns 0, -HS_EDEPTH or -HS_ERANGE as hs_blob_encode does.
 */
int hs_stack_bits_encode(const uint64_t *frames, uint32_t depth, struct hs_stack_bits *sb);

/*
 * hs_blob_encode_stack - the blob of stack @sb and @size bytes: the same
 * bytes hs_blob_encode gives for that record. Returns the blob length,
 * -HS_ERANGE or -HS_ENOSPC (HS_BLOB_BUF always suffices).
 */
int hs_blob_encode_stack(const struct hs_stack_bits *sb, uint64_t size, uint8_t *out, size_t cap);

/*
 * hs_token_encode_stack - "~m#<base64>" for stack @sb and @size bytes;
 * the same text hs_token_encode gives for that record.
 * Returns the length without the NUL, -HS_ERANGE or -HS_ENOSPC.
 */
int hs_token_encode_stack(const struct hs_stack_bits *sb, uint64_t size, char *out, size_t cap);

/*
 * hs_blob_decode - parse @len bytes of blob into @rec.
 * Returns 0; or -HS_ESHORT, -HS_ETRAILER, -HS_ETRUNC, -HS_EDELTA0,
 * -HS_EDELTAREF, -HS_EOVERFLOW, -HS_EPADDING. @rec is unspecified on error.
 */
int hs_blob_decode(const uint8_t *blob, size_t len, struct hs_record *rec);

/*
 * hs_base64_encode - standard alphabet, '=' padding, no line breaks.
 * Writes 4*ceil(@len/3) characters and a NUL; returns that count (without
 * the NUL) or -HS_ENOSPC.
 */
int hs_base64_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/*
 * hs_base64_decode - decode @len characters (padding optional).
 * Returns the byte count, -HS_EBASE64 for a character outside the alphabet,
 * misplaced '=', a length of 4k+1 or non-zero trailing bits; -HS_ENOSPC.
 */
int hs_base64_decode(const char *in, size_t len, uint8_t *out, size_t cap);

/* Characters of a base64 token (alphabet and '='): 1 if @c is one. */
int hs_is_base64_char(int c);

/*
 * hs_token_encode - @rec as "~m#<base64>" NUL-terminated in @out.
 * Returns the length without the NUL, or any error of hs_blob_encode;
 * HS_TOKEN_BUF bytes always suffice.
 */
int hs_token_encode(const struct hs_record *rec, char *out, size_t cap);

/*
 * hs_token_decode - decode the base64 text of one token (without "~m#").
 * Returns 0 or any error of hs_base64_decode / hs_blob_decode.
 */
int hs_token_decode(const char *b64, size_t len, struct hs_record *rec);

/*
 * hs_token_find - first "~m#" token in @s[0..@len).
 * Returns a pointer to the first base64 character after the lead-in and its
 * length in *@tok_len (0 for a lead-in with no base64 after it), or NULL.
 * The token ends at the first character outside hs_is_base64_char().
 */
const char *hs_token_find(const char *s, size_t len, size_t *tok_len);

/*
 * hs_bline_format - @rec as "~b#size: N, 0x.. 0x.." NUL-terminated
 * (FORMAT.md: lower-case hex, single spaces, no trailing space).
 * Returns the length without the NUL or -HS_ENOSPC; HS_BLINE_BUF suffices.
 */
int hs_bline_format(const struct hs_record *rec, char *out, size_t cap);

/*
 * hs_bline_parse - parse the text after "~b#": "size: N, 0x.. 0x..".
 * Stops after the last frame; a trailing space is left unconsumed.
 * Returns the number of characters consumed, -HS_ESYNTAX, -HS_EDEPTH for
 * more than 31 frames or -HS_ERANGE for a value that does not fit 64 bits.
 */
int hs_bline_parse(const char *s, size_t len, struct hs_record *rec);

#ifdef __cplusplus
}
#endif

#endif /* HEAPSNOOP_CODEC_H */

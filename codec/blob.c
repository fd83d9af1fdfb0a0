// SPDX-License-Identifier: MIT
/*
 * blob.c - the bitstream of a `~m#` record: encode and decode.
 *
 * Layout and encoder choice: docs/FORMAT.md. Every field of width w is
 * written as w value bits, MSB first, then one pad bit (the reference's
 * off-by-one, kept for compatibility). The reference shifts an int, which
 * breaks at bit 31; here every value is a uint64_t, so values up to 2^63-1
 * round-trip and values below 2^31 come out bit-identical.
 */
#include <string.h>

#include "heapsnoop/codec.h"

/* Frames the encoder looks back over when choosing a delta base. */
#define LOOKBACK 8

struct bitwriter {
	uint8_t *buf;
	size_t cap;	/* bytes */
	size_t pos;	/* bits written */
};

struct bitreader {
	const uint8_t *buf;
	size_t nbits;
	size_t pos;
};

/*
 * @v with its bytes in big-endian order and back: the bitstream's 64-bit
 * windows are loaded and stored as bytes (memcpy), MSB first, on a host
 * of either byte order (Cortex-M and x86 are little-endian).
 */
static inline uint64_t be64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return v;
#else
	return __builtin_bswap64(v);
#endif
}

/* Significant bits of @v: position of its highest set bit, 1 for 0. */
static unsigned int sig_bits(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 1;
}

/*
 * OR the low @w (1..56) bits of @v in at the current position, MSB first:
 * one 64-bit big-endian window where 8 bytes are left (the buffer is
 * zeroed), a byte at a time near its end. Room was checked.
 */
static inline __attribute__((always_inline)) void bw_put(struct bitwriter *bw, uint64_t v,
						   unsigned int w)
{
	size_t byte = bw->pos >> 3;
	unsigned int off = bw->pos & 7;

	v &= (1ULL << w) - 1;
	if (byte + 8 <= bw->cap) {
		uint64_t win;

		__builtin_memcpy(&win, bw->buf + byte, 8);
		win = be64(be64(win) | v << (64 - off - w));
		__builtin_memcpy(bw->buf + byte, &win, 8);
		bw->pos += w;
		return;
	}
	while (w) {
		unsigned int take = 8 - (bw->pos & 7);

		if (take > w)
			take = w;
		w -= take;
		bw->buf[bw->pos >> 3] |= (uint8_t)(((v >> w) & ((1u << take) - 1)) <<
						   (8 - (bw->pos & 7) - take));
		bw->pos += take;
	}
}

/* Write F(w): the low @w bits of @v MSB first, then a 0 pad bit. */
static inline __attribute__((always_inline)) int bw_field(struct bitwriter *bw, uint64_t v,
						  unsigned int w)
{
	size_t end = bw->pos + w + 1;

	if ((end + 7) / 8 > bw->cap)
		return -HS_ENOSPC;
	if (w > 56) {
		bw_put(bw, v >> 32, w - 32);
		bw_put(bw, v, 32);
	} else if (w) {
		bw_put(bw, v, w);
	}
	bw->pos++; /* the pad bit; the buffer was zeroed */
	return 0;
}

/* Big-endian 64-bit load of 8 bytes, or of what is left before @end. */
static uint64_t load_be64(const uint8_t *p, const uint8_t *end)
{
	uint64_t v = 0;

	if (end - p >= 8) {
		__builtin_memcpy(&v, p, 8);
		return be64(v);
	}
	for (int i = 0; i < 8; i++)
		v = v << 8 | (p + i < end ? p[i] : 0);
	return v;
}

/*
 * Read F(w) (w <= 63): @w value bits, then skip the pad bit. One 64-bit
 * window holds at least 57 bits from any position; wider fields take two.
 */
static int br_field(struct bitreader *br, unsigned int w, uint64_t *v)
{
	const uint8_t *end = br->buf + br->nbits / 8;
	size_t pos = br->pos;
	uint64_t r;

	if (br->nbits - pos < (size_t)w + 1)
		return -HS_ETRUNC;
	if (w == 0) {
		r = 0;
	} else if (w <= 56) {
		r = load_be64(br->buf + (pos >> 3), end) << (pos & 7) >> (64 - w);
	} else {
		uint64_t hi = load_be64(br->buf + (pos >> 3), end) << (pos & 7) >> 32;
		size_t p2 = pos + 32;
		uint64_t lo = load_be64(br->buf + (p2 >> 3), end) << (p2 & 7) >> (64 - (w - 32));

		r = hi << (w - 32) | lo;
	}
	br->pos = pos + w + 1;
	*v = r;
	return 0;
}

/*
 * F(6)=n then F(n)=v: a value with its own bit count. The two fields and
 * their pad bits are n + 8 bits, [n:6][0][v:n][0], written as one when
 * they fit a window (n <= 48, every size and most deltas), else in parts.
 */
static int bw_counted(struct bitwriter *bw, uint64_t v)
{
	unsigned int n = sig_bits(v), w = n + 8;

	if ((bw->pos + w + 7) / 8 > bw->cap)
		return -HS_ENOSPC;
	if (w <= 56) {
		bw_put(bw, (uint64_t)n << (n + 2) | v << 1, w);
		return 0;
	}
	bw_put(bw, (uint64_t)n << 1, 7);
	if (n + 1 <= 56) {
		bw_put(bw, v << 1, n + 1);
	} else {
		bw_put(bw, v >> 32, n - 32);
		bw_put(bw, v << 1, 33);
	}
	return 0;
}

static int br_counted(struct bitreader *br, uint64_t *v)
{
	uint64_t n;
	int err = br_field(br, 6, &n);

	if (err)
		return err;
	/* n fits 6 bits, so n <= 63: no count can overflow 64 bits. */
	return br_field(br, (unsigned int)n, v);
}

static uint64_t abs_diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * The reference's choice for frame @i: the nearest of up to 8 earlier frames,
 * earliest on a tie; a delta only when its base index is not 0 (the
 * reference tests the index for truth) and it saves at least 5 bits.
 * Returns the base index, or -1 for a literal.
 */
static int choose_base(const uint64_t *f, unsigned int i)
{
	unsigned int lo = i > LOOKBACK ? i - LOOKBACK : 0;
	unsigned int best = lo;
	uint64_t best_d;

	if (i == 0)
		return -1;
	best_d = abs_diff(f[i], f[lo]);
	for (unsigned int j = lo + 1; j < i; j++) {
		uint64_t d = abs_diff(f[i], f[j]);

		if (d < best_d) {
			best_d = d;
			best = j;
		}
	}
	if (best == 0 || !(sig_bits(best_d) + 11 < sig_bits(f[i]) + 7))
		return -1;
	return (int)best;
}

int hs_stack_bits_encode(const uint64_t *frames, uint32_t depth, struct hs_stack_bits *sb)
{
	struct bitwriter bw = { .buf = sb->bits, .cap = sizeof(sb->bits) };
	int err;

	if (depth > HS_MAX_DEPTH)
		return -HS_EDEPTH;
	for (unsigned int i = 0; i < depth; i++)
		if (frames[i] > HS_MAX_VALUE)
			return -HS_ERANGE;

	memset(sb->bits, 0, sizeof(sb->bits));
	err = bw_field(&bw, depth, 5);
	for (unsigned int i = 0; !err && i < depth; i++) {
		int base = choose_base(frames, i);
		uint64_t v = frames[i];

		if (base < 0) {
			err = bw_field(&bw, 0, 1);
			if (!err)
				err = bw_counted(&bw, v);
			continue;
		}
		uint64_t b = frames[base];

		err = bw_field(&bw, 1, 1);
		if (!err)
			err = bw_field(&bw, i - 1 - base, 3);
		if (!err)
			err = bw_field(&bw, v <= b, 1); /* the reference: 1 for d == 0 */
		if (!err)
			err = bw_counted(&bw, abs_diff(v, b));
	}
	sb->nbits = (uint32_t)bw.pos;
	return err;
}

/* The blob of stack @sb with @size: stack bits, size field, trailer. */
static int blob_finish(const struct hs_stack_bits *sb, uint64_t size, uint8_t *out, size_t cap)
{
	struct bitwriter bw = { .buf = out, .cap = cap, .pos = sb->nbits };
	size_t nbytes = (sb->nbits + 7) / 8, len;
	int err;

	if (size > HS_MAX_VALUE)
		return -HS_ERANGE;
	if (nbytes > cap)
		return -HS_ENOSPC;
	memcpy(out, sb->bits, nbytes);
	/*
	 * The size field ORs its <= 72 bits in past the stack's: zero them,
	 * not the whole buffer (the 64-bit window only ORs, the bytes it
	 * reads past the field stay as they are, and are not the blob's).
	 */
	memset(out + nbytes, 0, cap - nbytes < 16 ? cap - nbytes : 16);
	err = bw_counted(&bw, size);
	if (err)
		return err;
	len = (bw.pos + 7) / 8 + 2;
	if (len > cap)
		return -HS_ENOSPC;
	out[len - 2] = (uint8_t)(len >> 8);
	out[len - 1] = (uint8_t)len;
	return (int)len;
}

int hs_blob_encode_stack(const struct hs_stack_bits *sb, uint64_t size, uint8_t *out, size_t cap)
{
	return blob_finish(sb, size, out, cap);
}

int hs_blob_encode(const struct hs_record *rec, uint8_t *out, size_t cap)
{
	struct hs_stack_bits sb;
	int err;

	if (rec->size > HS_MAX_VALUE)
		return -HS_ERANGE;
	err = hs_stack_bits_encode(rec->frames, rec->depth, &sb);
	return err ? err : blob_finish(&sb, rec->size, out, cap);
}

int hs_token_encode_stack(const struct hs_stack_bits *sb, uint64_t size, char *out, size_t cap)
{
	uint8_t blob[HS_BLOB_BUF];
	int len, n;

	len = blob_finish(sb, size, blob, sizeof(blob));
	if (len < 0)
		return len;
	if (cap < 4)
		return -HS_ENOSPC;
	memcpy(out, "~m#", 3);
	n = hs_base64_encode(blob, (size_t)len, out + 3, cap - 3);
	return n < 0 ? n : n + 3;
}

int hs_blob_decode(const uint8_t *blob, size_t len, struct hs_record *rec)
{
	struct bitreader br = { .buf = blob };
	uint64_t v, flag;
	int err;

	if (len < 3)
		return -HS_ESHORT;
	if (((size_t)blob[len - 2] << 8 | blob[len - 1]) != len)
		return -HS_ETRAILER;
	br.nbits = (len - 2) * 8;

	err = br_field(&br, 5, &v);
	if (err)
		return err;
	rec->depth = (uint32_t)v;
	for (unsigned int i = 0; i < rec->depth; i++) {
		err = br_field(&br, 1, &flag);
		if (err)
			return err;
		if (!flag) {
			err = br_counted(&br, &rec->frames[i]);
			if (err)
				return err;
			continue;
		}
		uint64_t k, neg, d, b;

		if (i == 0)
			return -HS_EDELTA0;
		err = br_field(&br, 3, &k);
		if (!err)
			err = br_field(&br, 1, &neg);
		if (!err)
			err = br_counted(&br, &d);
		if (err)
			return err;
		if (k + 1 > i)
			return -HS_EDELTAREF;
		b = rec->frames[i - 1 - k];
		/* Only values below 2^63 can be written, so none can decode. */
		if (neg ? d > b : d > HS_MAX_VALUE - b)
			return -HS_EOVERFLOW;
		rec->frames[i] = neg ? b - d : b + d;
	}
	err = br_counted(&br, &rec->size);
	if (err)
		return err;

	/* What is left must be the zero padding to a byte boundary. */
	if (br.nbits - br.pos >= 8)
		return -HS_EPADDING;
	if (br.pos < br.nbits && (blob[br.pos >> 3] & (0xff >> (br.pos & 7))))
		return -HS_EPADDING;
	return 0;
}

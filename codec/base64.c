// SPDX-License-Identifier: MIT
/*
 * base64.c - RFC 4648 base64, standard alphabet, '=' padding.
 *
 * Table-driven both ways; decoding is strict about what it accepts (so a
 * damaged token is an error, not a different stack) but takes input with or
 * without the trailing padding, as log scrapers often lose it.
 */
#include "heapsnoop/codec.h"

static const char enc[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 1 + value for alphabet characters, 65 for '=', 0 for everything else. */
static const uint8_t dec[256] = {
	['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6,
	['G'] = 7, ['H'] = 8, ['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12,
	['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18,
	['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24,
	['Y'] = 25, ['Z'] = 26,
	['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
	['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38,
	['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44,
	['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49, ['x'] = 50,
	['y'] = 51, ['z'] = 52,
	['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56, ['4'] = 57, ['5'] = 58,
	['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64,
	['='] = 65,
};

int hs_is_base64_char(int c)
{
	return dec[(uint8_t)c] != 0;
}

int hs_base64_encode(const uint8_t *in, size_t len, char *out, size_t cap)
{
	size_t olen = (len + 2) / 3 * 4;
	size_t i = 0;
	char *o = out;

	if (olen + 1 > cap)
		return -HS_ENOSPC;
	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*o++ = enc[v >> 18];
		*o++ = enc[(v >> 12) & 63];
		*o++ = enc[(v >> 6) & 63];
		*o++ = enc[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		*o++ = enc[v >> 18];
		*o++ = enc[(v >> 12) & 63];
		*o++ = i + 1 < len ? enc[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return (int)olen;
}

int hs_base64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
	size_t n = len, i, o = 0;
	uint32_t acc = 0;
	unsigned int bits = 0;

	/* Up to two '=' at the end, and only where they pad a 4-group. */
	while (n > 0 && in[n - 1] == '=' && len - n < 2)
		n--;
	if (n != len && len % 4)
		return -HS_EBASE64;
	if (n % 4 == 1)
		return -HS_EBASE64;
	if (n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) > cap)
		return -HS_ENOSPC;

	/* Whole groups of 4 characters to 3 bytes, then the tail. */
	for (i = 0; i + 4 <= n; i += 4) {
		uint32_t a = dec[(uint8_t)in[i]] - 1u, b = dec[(uint8_t)in[i + 1]] - 1u;
		uint32_t c = dec[(uint8_t)in[i + 2]] - 1u, d = dec[(uint8_t)in[i + 3]] - 1u;

		/* '=' inside (64) or not base64 (0 - 1 wraps) */
		if ((a | b | c | d) > 63)
			return -HS_EBASE64;
		acc = a << 18 | b << 12 | c << 6 | d;
		out[o++] = (uint8_t)(acc >> 16);
		out[o++] = (uint8_t)(acc >> 8);
		out[o++] = (uint8_t)acc;
	}
	acc = 0;
	for (; i < n; i++) {
		uint8_t v = dec[(uint8_t)in[i]] - 1;

		if (v > 63)
			return -HS_EBASE64;
		acc = acc << 6 | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* Leftover bits of a partial group must be zero (canonical form). */
	if (acc & ((1u << bits) - 1))
		return -HS_EBASE64;
	return (int)o;
}

// SPDX-License-Identifier: MIT
/*
 * pylines.c - CPython's location table decoded for a line (pylines.h;
 * written from the format's description in CPython's
 * Objects/locations.md).
 */
#include <stdint.h>

#include "pylines.h"

/* A varint at *@i: 6 bits a byte, low first, 0x40 = more. 0 or -1. */
static int varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 30)
			return -1;
		b = t[(*i)++];
		v |= (uint32_t)(b & 0x3f) << shift;
		shift += 6;
	} while (b & 0x40);
	*out = v;
	return 0;
}

/* A signed varint: the sign in bit 0. */
static int svarint(const uint8_t *t, size_t len, size_t *i, int32_t *out)
{
	uint32_t u;

	if (varint(t, len, i, &u))
		return -1;
	*out = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return 0;
}

int py_lines__at(const uint8_t *tab, size_t len, int firstline, int index)
{
	int64_t line = firstline;
	uint32_t addr = 0, u;
	size_t i = 0;

	if (index < 0)
		return PY_LINE_BAD;
	while (i < len) {
		uint8_t b = tab[i++];
		uint32_t kind = (b >> 3) & 15, n = (b & 7) + 1;
		int32_t dl = 0;

		if (!(b & 0x80))
			return PY_LINE_BAD;	/* not an entry's first byte */
		switch (kind) {
		case 15:	/* no location */
			break;
		case 14:	/* long: line delta, end line, columns */
			if (svarint(tab, len, &i, &dl) || varint(tab, len, &i, &u) ||
			    varint(tab, len, &i, &u) || varint(tab, len, &i, &u))
				return PY_LINE_BAD;
			break;
		case 13:	/* no columns */
			if (svarint(tab, len, &i, &dl))
				return PY_LINE_BAD;
			break;
		case 10: case 11: case 12:	/* one line: two bytes of columns */
			dl = (int32_t)kind - 10;
			i += 2;
			break;
		default:	/* short: one byte of columns */
			i += 1;
			break;
		}
		line += dl;
		if ((uint32_t)index < addr + n) {
			if (kind == 15)
				return PY_LINE_NONE;
			return line >= 0 && line <= INT32_MAX ? (int)line : PY_LINE_BAD;
		}
		addr += n;
	}
	return PY_LINE_BAD;
}

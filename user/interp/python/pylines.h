/* SPDX-License-Identifier: MIT */
/*
 * pylines.h - the line of an instruction from a code object's location
 * table (co_linetable), CPython 3.11 to 3.14's format, as CPython's
 * Objects/locations.md describes it: a run of entries, each a first byte
 * 1CCCCLLL (C the kind, L+1 the code units it covers) and the kind's
 * bytes. The line starts at co_firstlineno; kinds 0-9 keep it (one byte
 * of columns), 10-12 add kind - 10 (two bytes of columns), 13 adds a
 * signed varint (no columns), 14 a signed varint then three varints
 * (end line, column + 1, end column + 1), 15 covers code units with no
 * location. A varint is 6 bits a byte, the low ones first, 0x40 saying
 * more follow; a signed one keeps its sign in bit 0.
 *
 * Checked against CPython's own co_lines() on every code unit of the
 * standard library's modules (tests/interp/test_pylines.c).
 */
#ifndef HEAPSNOOP_PYLINES_H
#define HEAPSNOOP_PYLINES_H

#include <stddef.h>
#include <stdint.h>

/* py_lines__at()'s results other than a line. */
#define PY_LINE_NONE (-1)	/* an instruction with no location (kind 15) */
#define PY_LINE_BAD (-2)	/* the table ends first, or is not one */

/*
 * The line of the instruction holding code unit @index (from
 * co_code_adaptive's start) in the location table @tab of @len bytes
 * whose code object starts at line @firstline. Returns the line (>= 0),
 * PY_LINE_NONE or PY_LINE_BAD (@index < 0 included).
 */
int py_lines__at(const uint8_t *tab, size_t len, int firstline, int index);

#endif /* HEAPSNOOP_PYLINES_H */

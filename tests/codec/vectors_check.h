/* SPDX-License-Identifier: MIT */
/*
 * vectors_check.h - every line of the format's test vectors
 * (tests/data/vectors.tsv, docs/FORMAT.md "Test vectors") checked against
 * the codec from a buffer, with no stdio and no allocation, so that a
 * 32-bit target runs the same check as the host's test_codec: the i386
 * build (vectors_host.c) and the Cortex-M3 firmware (tests/mcu/vectors_fw.c).
 */
#ifndef HEAPSNOOP_VECTORS_CHECK_H
#define HEAPSNOOP_VECTORS_CHECK_H

#include <stddef.h>

/* Says one line of text (no newline in it) about a vector that failed. */
typedef void (*vectors_say_fn)(void *arg, const char *text);

/*
 * Check each line of @tsv[@len]: encode(column 1) == column 2 byte for
 * byte, decode(column 2) formatted == column 3, column 3 parsed == column
 * 1. Each failure said through @say (the line's number and what was
 * wrong). *@lines: the lines read. Returns the lines that failed (a line
 * that does not parse as a vector fails).
 */
unsigned int vectors_check(const char *tsv, size_t len, vectors_say_fn say, void *arg,
			   unsigned int *lines);

#endif /* HEAPSNOOP_VECTORS_CHECK_H */

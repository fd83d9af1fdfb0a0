// SPDX-License-Identifier: MIT
/*
 * vectors_host.c - vectors_check.c on a Linux host of any word size: the
 * i386 build's check that the codec is bit-exact there
 * (tests/collector/test_hsam_i386.sh).
 *   vectors_host tests/data/vectors.tsv
 * Prints "vectors: N of N exact" and exits 0, or each failure and 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vectors_check.h"

static void say(void *arg, const char *text)
{
	(void)arg;
	fprintf(stderr, "vectors_host: %s\n", text);
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
	size_t len;
	unsigned int lines, bad;

	if (!f) {
		fprintf(stderr, "vectors_host: usage: vectors_host VECTORS.tsv (readable)\n");
		return 2;
	}
	len = fread(buf, 1, sizeof(buf), f);
	if (ferror(f) || !feof(f)) {
		fprintf(stderr, "vectors_host: %s: not read whole (1 MiB at most)\n", argv[1]);
		return 2;
	}
	fclose(f);
	bad = vectors_check(buf, len, say, NULL, &lines);
	printf("vectors: %u of %u exact\n", lines - bad, lines);
	return bad || !lines;
}

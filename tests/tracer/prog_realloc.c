// SPDX-License-Identifier: MIT
/*
 * prog_realloc.c - a realloc that must move its block: 16 bytes grown to
 * 1 MiB (past the heap's top: mmap'ed) while another block sits after it.
 * Leaks both. 3 allocations, 1 block freed by the move, 2 live.
 */
#include <stdlib.h>

void *volatile keep[2];	/* not static: the leaks are not optimized away */

int main(void)
{
	char *a = malloc(16);

	keep[0] = malloc(16);
	keep[1] = realloc(a, 1 << 20);
	return 0;
}

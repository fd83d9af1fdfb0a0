// SPDX-License-Identifier: MIT
/*
 * prog_nopie.c - leaks through a known chain; built as a non-PIE program
 * for heapdecode -e, and rebuilt with -DVARIANT for the build-ID test.
 * Chain (innermost first): leaf_alloc, middle, outer, main.
 */
#include <stdlib.h>

void *volatile keep[16];

__attribute__((noinline)) void *leaf_alloc(int i)
{
	return keep[i] = malloc(64 + (size_t)i);
}

__attribute__((noinline)) void middle(int i)
{
	leaf_alloc(i);
#ifdef VARIANT
	keep[15] = (void *)1;
#endif
}

__attribute__((noinline)) void outer(void)
{
	for (int i = 0; i < 5; i++)
		middle(i);
}

int main(void)
{
	outer();
	return 0;
}

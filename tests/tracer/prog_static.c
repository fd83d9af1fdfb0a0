// SPDX-License-Identifier: MIT
/* prog_static.c - a statically linked program leaking 4 blocks of 50. */
#include <stdlib.h>

void *volatile keep[4];

__attribute__((noinline)) static void static_leak(void)
{
	for (int i = 0; i < 4; i++)
		keep[i] = malloc(50);
}

int main(void)
{
	static_leak();
	return 0;
}

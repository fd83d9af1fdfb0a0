// SPDX-License-Identifier: MIT
/*
 * prog_live.c - many live blocks, fast: for test_live.sh. Allocates N
 * blocks of 24 bytes from grow_live(), saying "at I" (I blocks live) K
 * times on the way without waiting, then frees every other one from
 * free_half(), says "done" and exits: N/2 blocks of 24 bytes stay live.
 * Usage: prog_live N K
 */
#include <stdio.h>
#include <stdlib.h>

static void **blocks;

static void __attribute__((noinline)) grow_live(long n, long k)
{
	long every = k ? n / k : n + 1;

	for (long i = 0; i < n; i++) {
		blocks[i] = malloc(24);
		if (!blocks[i])
			exit(1);
		if (i && i % every == 0) {
			printf("at %ld\n", i);
			fflush(stdout);
		}
	}
	__asm__ volatile("" ::: "memory");	/* a frame of its own */
}

static void __attribute__((noinline)) free_half(long n)
{
	for (long i = 0; i < n; i += 2)
		free(blocks[i]);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0, k = argc > 2 ? atol(argv[2]) : 0;

	if (n < 2 || k < 0) {
		fprintf(stderr, "usage: prog_live N K\n");
		return 2;
	}
	/* Live too, from main: not among grow_live's blocks. */
	blocks = calloc((size_t)n, sizeof(*blocks));
	if (!blocks)
		return 1;
	grow_live(n, k);
	free_half(n);
	printf("done\n");
	fflush(stdout);
	return 0;
}

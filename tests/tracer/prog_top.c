// SPDX-License-Identifier: MIT
/*
 * prog_top.c - a leak that grows in known steps, for test_top.sh (heapsnoop
 * --top). It allocates nothing but these, and talks through read(2) and
 * write(2) only (stdio would allocate): PHASES times, BLOCKS blocks of
 * BLOCK_BYTES from top_leak() are kept, then "phase K" (K from 1, K *
 * BLOCKS * BLOCK_BYTES bytes live) is written on stdout and a line is
 * waited for on stdin; then it exits, the blocks still live.
 */
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#define PHASES 3
#define BLOCKS 4
#define BLOCK_BYTES (64 << 10)	/* 256 KiB a phase */

static void *kept[PHASES * BLOCKS];
static volatile int blocks = BLOCKS;	/* no unrolling: one call site, one stack */

__attribute__((noinline)) static void *top_leak(void)
{
	void *p = malloc(BLOCK_BYTES);

	__asm__ volatile("" ::: "memory");	/* a frame of its own */
	return p;
}

/* "phase K\n" out, then any line in; 0, or -1 at EOF. */
static int handshake(int k)
{
	char buf[32], c;
	int n = snprintf(buf, sizeof(buf), "phase %d\n", k);

	if (write(1, buf, (size_t)n) != n)
		return -1;
	do {
		if (read(0, &c, 1) != 1)
			return -1;
	} while (c != '\n');
	return 0;
}

int main(void)
{
	for (int k = 0; k < PHASES; k++) {
		for (int i = 0; i < blocks; i++)
			kept[k * BLOCKS + i] = top_leak();
		if (handshake(k + 1))
			return 1;
	}
	return 0;
}

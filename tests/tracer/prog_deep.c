// SPDX-License-Identifier: MIT
/*
 * prog_deep.c - an allocation N calls deep, for test_depth.sh: main calls
 * deep_a, deep_a calls deep_b, deep_b deep_c, deep_c deep_a again, N calls
 * in all, and the innermost mallocs 1234 bytes; main mallocs 4321 beside
 * it. Both stay live to the exit. Three functions in turn, not one, so
 * that a test sees the frames' order, not only their count: the stack,
 * root first, is _start, __libc_start_main, __libc_start_call_main, main,
 * then deep_a, deep_b, deep_c, ... (N + 4 frames; deep 60: 64). Built with
 * frame pointers and no sibling calls (the Makefile's PROG_CFLAGS), so
 * both of heapsnoop's --unwind modes see every call.
 * Usage: prog_deep N
 */
#include <stdio.h>
#include <stdlib.h>

static void *keep, *keep2;

static void *deep_b(long n);
static void *deep_c(long n);

/* Each calls the next with @n - 1, the last (n 1) allocates: never a tail call. */
__attribute__((noinline)) static void *deep_a(long n)
{
	void *p = n > 1 ? deep_b(n - 1) : malloc(1234);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *deep_b(long n)
{
	void *p = n > 1 ? deep_c(n - 1) : malloc(1234);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *deep_c(long n)
{
	void *p = n > 1 ? deep_a(n - 1) : malloc(1234);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;

	if (n < 1 || n > 100000) {
		fprintf(stderr, "usage: prog_deep N (1..100000 calls deep)\n");
		return 2;
	}
	keep = deep_a(n);
	keep2 = malloc(4321);
	if (!keep || !keep2)
		return 1;
	__asm__ volatile("" : : "r"(keep), "r"(keep2) : "memory");
	return 0;
}

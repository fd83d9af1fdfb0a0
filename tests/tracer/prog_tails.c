// SPDX-License-Identifier: MIT
/*
 * prog_tails.c - deep stacks whose outer part stays while the inner part
 * changes, as a compiler's or an interpreter's do: what the tracer's stack
 * tails are for (docs/DESIGN.md, "Deep stacks copied once"). Each of
 * THREADS threads (the main one too) runs ROUNDS rounds of two phases,
 * phase_a() and phase_b(), each a frame of 8 KiB at the same depth
 * called from the same loop, so that a tail taken in one must not be
 * taken for the other; in each phase, allocations at depths that vary
 * from 8 to 31 calls, down two recursive functions by the bits of a
 * counter, one with a frame pointer and one without, every block kept.
 * A block's size names its phase: 1000 + n in phase_a, 2000 + n in
 * phase_b (n < 1000).
 *
 *   prog_tails [THREADS [ROUNDS]]   (defaults 2, 20)
 *
 * Live at exit: THREADS * ROUNDS * 2 * ALLOCS blocks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALLOCS 50

static int rounds = 20;
static void *volatile sink;

__attribute__((noinline)) static void leaf(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	sink = p;
}

__attribute__((noinline)) static void down_b(int depth, unsigned int bits, size_t size);

/* With a frame pointer (PROG_CFLAGS: its CFA by %rbp). */
__attribute__((noinline)) static void down_a(int depth, unsigned int bits, size_t size)
{
	volatile char pad[48];

	pad[0] = (char)depth;
	if (!depth)
		leaf(size);
	else if (bits & 1)
		down_b(depth - 1, bits >> 1, size);
	else
		down_a(depth - 1, bits >> 1, size);
	__asm__ volatile("" ::: "memory");
	(void)pad[0];
}

/* Without one: its CFA by the stack pointer. */
__attribute__((noinline, optimize("omit-frame-pointer")))
static void down_b(int depth, unsigned int bits, size_t size)
{
	volatile char pad[80];

	pad[0] = (char)depth;
	if (!depth)
		leaf(size);
	else if (bits & 2)
		down_a(depth - 1, bits >> 1, size);
	else
		down_b(depth - 1, bits >> 1, size);
	__asm__ volatile("" ::: "memory");
	(void)pad[0];
}

/* A phase: a large frame, then allocations at varying depths below it. */
#define PHASE(name, base)							\
	__attribute__((noinline)) static void name(unsigned int seed)		\
	{									\
		volatile char big[8192];					\
										\
		memset((char *)big, 1, sizeof(big));				\
		for (unsigned int i = 0; i < ALLOCS; i++) {			\
			unsigned int x = (seed + i) * 2654435761u;		\
										\
			down_a(8 + (int)(x >> 27) % 24, x, base + (x >> 8) % 1000); \
		}								\
		(void)big[0];							\
	}
PHASE(phase_a, 1000)
PHASE(phase_b, 2000)

__attribute__((noinline)) static void *run(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg * 7919;

	for (int r = 0; r < rounds; r++) {
		phase_a(seed + (unsigned int)r);
		phase_b(seed + (unsigned int)r);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 2;
	pthread_t th[64];

	if (argc > 2)
		rounds = atoi(argv[2]);
	if (threads < 1 || threads > 64 || rounds < 1) {
		fprintf(stderr, "usage: prog_tails [THREADS (1..64) [ROUNDS]]\n");
		return 2;
	}
	for (long t = 1; t < threads; t++)
		if (pthread_create(&th[t], NULL, run, (void *)t))
			return 1;
	run(NULL);
	for (long t = 1; t < threads; t++)
		pthread_join(th[t], NULL);
	return 0;
}

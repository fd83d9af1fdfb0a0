// SPDX-License-Identifier: MIT
/*
 * workload.c - the allocator workload of the tracer benchmark: a mix of
 * malloc, calloc, realloc and free made through call chains 6 to 12 frames
 * deep from ~540 distinct call paths, over a pool of 4096 slots.
 *
 *   workload OPS [--wait | --wait-hold | --wait-free-probe]
 * Prints "workload: OPS calls, NS ns per call" measured over the loop only,
 * then "workload: cpu SECONDS" (its own user + system time, whole run: a
 * tracer's CPU is what its rusage has beyond that).
 * --wait: print "ready" and wait for a line on stdin first (to attach).
 * --wait-hold: as --wait, and after printing the timing wait for another
 *   line (or EOF) before exiting: for reading the tracer's per-program
 *   statistics while its programs are still attached (bench/progcost.sh).
 * --wait-free-probe: print "ready", then wait until a probe sits on
 *   free()'s entry (free(NULL) turns slow): for tracers that say they are
 *   attached before they are.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SLOTS 4096
#define PATHS 540	/* distinct call paths; WORKLOAD_PATHS overrides */

static void *slot[SLOTS];
static uint64_t calls;

__attribute__((noinline)) static void leaf(unsigned int i)
{
	unsigned int s = (i * 2654435761u) % SLOTS;

	if (!slot[s]) {
		slot[s] = (i & 1) ? malloc(16 + i % 512) : calloc(1 + i % 16, 24);
	} else if (i % 3 == 0) {
		void *p = realloc(slot[s], 32 + i % 1024);

		if (p)
			slot[s] = p;
	} else {
		free(slot[s]);
		slot[s] = NULL;
	}
	calls++;
}

/* Two call sites per level: the path's bits pick one, so paths differ. */
__attribute__((noinline)) static void step(unsigned int path, unsigned int depth, unsigned int i)
{
	if (!depth) {
		leaf(i);
		return;
	}
	/* Different code after each call keeps them two call sites. */
	if (path & 1) {
		step(path >> 1, depth - 1, i);
		__asm__ volatile("nop" ::: "memory");
	} else {
		step(path >> 1, depth - 1, i);
		__asm__ volatile("nop; nop" ::: "memory");
	}
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ns per free(NULL), over 200 calls. */
static double free_null_ns(void)
{
	void *volatile p = NULL;
	double t0 = now_ns();

	for (int i = 0; i < 200; i++)
		free(p);
	return (now_ns() - t0) / 200;
}

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 1000000;
	const char *env = getenv("WORKLOAD_PATHS");
	unsigned int paths = env ? (unsigned int)atoi(env) : PATHS;
	bool hold = argc > 2 && !strcmp(argv[2], "--wait-hold");
	struct timespec a, b;
	struct rusage ru;
	char line[16];
	double ns;

	if (argc > 2 && (!strcmp(argv[2], "--wait") || hold)) {
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "--wait-free-probe")) {
		int slow = 0;

		printf("ready\n");
		fflush(stdout);
		/*
		 * A probe on free's entry (a `test`, single-stepped) costs
		 * ~14 us; unprobed, free(NULL) is a few ns. Three slow rounds
		 * in a row, so a preemption cannot pass for a probe. Bounded.
		 */
		for (long round = 0; slow < 3; round++) {
			slow = free_null_ns() > 3000 ? slow + 1 : 0;
			if (round > 5000000)
				return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < ops; i++) {
		unsigned int path = (unsigned int)(i % (paths ? paths : PATHS));

		/* 4..12 levels: up to 2^12 distinct paths. */
		step(path, paths > PATHS ? 4 + path % 9 : 4 + path % 7, (unsigned int)i);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("workload: %llu calls, %.1f ns per call\n", (unsigned long long)calls, ns / (double)calls);
	getrusage(RUSAGE_SELF, &ru);
	printf("workload: cpu %.6f\n", (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	if (hold) {
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 0;
	}
	return 0;
}

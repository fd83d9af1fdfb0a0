// SPDX-License-Identifier: MIT
/*
 * prog_mt.c - many threads allocating and freeing in a loop at once, as
 * fast as they can: a tracer's loader must keep up with all of them (issue
 * 31). Each of THREADS threads (default 16) makes ITER rounds (default
 * 100000) of churn_alloc() (malloc of 16..2063 bytes), every third one
 * grown by churn_grow() (realloc to twice its size), then freed; every
 * ITER / 1000 rounds it also keeps one block from keep_alloc(), of a size
 * that names it: 4096 + thread * 1000 + index, so that a live set can be
 * checked block by block. Churn sizes stay below 4096 and are all freed.
 *
 *   prog_mt [THREADS [ITER [wait]]]
 *
 * wait: say "ready PID" and read a line before the threads start, and
 * "done" after they all ended, then read a line before exiting (with -p,
 * the tracer has every event of the run by then). Live at exit: THREADS *
 * 1000 blocks of sizes 4096 + t * 1000 + i (t < THREADS, i < 1000), and
 * nothing else of the threads'.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEEP 1000

static long iters = 100000;
/* Where kept blocks go: they stay live, unreferenced once the thread ends. */
static void *volatile sink;

__attribute__((noinline)) static void *keep_alloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	memset(p, 0x5a, 16);
	return p;
}

__attribute__((noinline)) static void *churn_alloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	*(volatile char *)p = 1;
	return p;
}

__attribute__((noinline)) static void *churn_grow(void *p, size_t size)
{
	void *q = realloc(p, size);

	if (!q)
		abort();
	return q;
}

static void *thread_main(void *arg)
{
	long t = (long)arg, every = iters / KEEP;
	unsigned long x = (unsigned long)t * 2654435761u + 1;

	for (long i = 0; i < iters; i++) {
		size_t size;
		void *p;

		x = x * 6364136223846793005ul + 1442695040888963407ul;
		size = 16 + (x >> 33) % 1024;
		p = churn_alloc(size);
		if (i % 3 == 0)
			p = churn_grow(p, size * 2);
		free(p);
		if (i % every == 0 && i / every < KEEP)
			sink = keep_alloc(4096 + (size_t)t * 1000 + (size_t)(i / every));
	}
	return NULL;
}

static void wait_line(const char *say)
{
	char line[64];

	printf("%s\n", say);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(1);
}

int main(int argc, char **argv)
{
	long nthreads = argc > 1 ? atol(argv[1]) : 16;
	int wait = argc > 3 && !strcmp(argv[3], "wait");
	pthread_t *th;
	char ready[32];

	if (argc > 2)
		iters = atol(argv[2]);
	if (nthreads < 1 || nthreads > 1024 || iters < KEEP) {
		fprintf(stderr, "usage: prog_mt [THREADS (1..1024) [ITER (>= %d) [wait]]]\n", KEEP);
		return 2;
	}
	th = calloc((size_t)nthreads, sizeof(*th));
	if (!th)
		return 1;
	snprintf(ready, sizeof(ready), "ready %d", (int)getpid());
	if (wait)
		wait_line(ready);
	for (long t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, thread_main, (void *)t))
			return 1;
	for (long t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	free(th);
	if (wait)
		wait_line("done");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * livecost.c - what the preload collector's live set costs beyond the
 * time of a call (bench/collector.sh): memory per live block, and the
 * stall of a fork() with many blocks live (the collector freezes its
 * writers and, since issue 27, the child copies its table while the
 * parent goes on).
 *   livecost mem N     N blocks of 32 bytes held from 8 call sites; prints
 *                      "livecost: mem N blocks, RssAnon KB, RssShmem KB"
 *   livecost fork N    N blocks held, then 5 forks whose children _exit at
 *                      once; prints "livecost: fork N blocks, NS ns" (the
 *                      parent's best fork() call)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SITE(k) __attribute__((noinline)) static void *site##k(size_t n) \
	{ void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
static void *(*const sites[8])(size_t) = { site0, site1, site2, site3, site4, site5, site6, site7 };

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* VmRSS's parts from /proc/self/status, in KB. */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000;
	void **v;
	double best = 1e30;

	if (argc < 2)
		return 2;
	v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return 1;
	for (long i = 0; i < n; i++)
		v[i] = sites[i & 7](32);
	if (!strcmp(argv[1], "mem")) {
		printf("livecost: mem %ld blocks, RssAnon %ld KB, RssShmem %ld KB\n", n,
		       status_kb("RssAnon:"), status_kb("RssShmem:"));
		return 0;
	}
	for (int k = 0; k < 5; k++) {
		double t0 = now_ns(), t1;
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		t1 = now_ns();
		if (p < 0)
			return 1;
		waitpid(p, NULL, 0);
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	printf("livecost: fork %ld blocks, %.0f ns\n", n, best);
	return 0;
}

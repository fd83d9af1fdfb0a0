// SPDX-License-Identifier: MIT
/*
 * firstalloc.c - bench/startup.sh's target: prints the wall clock
 * (CLOCK_REALTIME, microseconds, as bash's $EPOCHREALTIME) at the first
 * line of main, then allocates and frees one block: the time from
 * heapsnoop's start to the program's first allocation of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(void)
{
	struct timespec ts;
	void *p;

	clock_gettime(CLOCK_REALTIME, &ts);
	p = malloc(64);
	printf("%lld.%06ld\n", (long long)ts.tv_sec, ts.tv_nsec / 1000);
	free(p);
	return 0;
}

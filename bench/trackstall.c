// SPDX-License-Identifier: MIT
/*
 * trackstall.c - the live table's worst stop (bench/live.sh): N inserts
 * (10,000,000) of distinct addresses, each timed; prints the slowest, how
 * many took over 1 ms and 10 ms, the whole run, and the table's free.
 * Built against this tree's tracker.c, and with -DTRACKER_PID against a
 * base tree's (keyed by (pid, address) then).
 *   usage: trackstall [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tracker.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000, over1 = 0, over10 = 0, at = 0;
	struct tracker *t = tracker__new();
	double worst = 0, t0 = now_s(), t1;
	struct live_alloc old;
	int replaced;

	if (!t)
		return 1;
	for (size_t i = 0; i < n; i++) {
		struct live_alloc e = { .addr = 0x7f0000000000ULL + i * 48, .size = 48, .ts = i,
#ifdef TRACKER_PID
					.pid = 1,
#endif
		};
		double a = now_s(), d;

		if (tracker__alloc(t, &e, &old, &replaced))
			return 1;
		d = now_s() - a;
		over1 += d > 1e-3;
		over10 += d > 1e-2;
		if (d > worst) {
			worst = d;
			at = i;
		}
	}
	t1 = now_s();
	tracker__free(t);
	printf("trackstall: %zu inserts in %.2f s; slowest %.1f ms (insert %zu); %zu over 1 ms, "
	       "%zu over 10 ms; freeing the table %.1f ms\n", n, t1 - t0, worst * 1e3, at, over1,
	       over10, (now_s() - t1) * 1e3);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * teststop.c - the test build's stops (see teststop.h); compiled only
 * with -DHS_TEST_STOPS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "teststop.h"

static int stop_point, stop_nth;

void test_stop__init(void)
{
	const char *v = getenv("HEAPSNOOP_TEST_STOP");

	if (!v || sscanf(v, "%d:%d", &stop_point, &stop_nth) != 2)
		stop_point = 0;
}

void test_stop(int point)
{
	if (point == stop_point && __atomic_sub_fetch(&stop_nth, 1, __ATOMIC_RELAXED) == 0) {
		dprintf(1, "ready %d\n", (int)getpid());
		for (;;)
			pause();
	}
}

// SPDX-License-Identifier: MIT
/*
 * test_pace.c - unit tests of the loader's pace between reads of the ring
 * buffer (user/tracer/stream/pace.c): the timeout at which a ring of 64
 * MiB would hold 1/8 of itself at the last interval's rate, within 1 to 10
 * ms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stream/pace.h"

#define MIB (1ULL << 20)

static void first_read_and_quiet_wait_longest(void **state)
{
	struct pace p;

	(void)state;
	pace__init(&p, 64 * MIB, 1, 10);
	assert_int_equal(pace__next(&p, 0, 100.0), 10);
	/* Nothing written in 10 ms: the longest wait again. */
	assert_int_equal(pace__next(&p, 0, 100.010), 10);
	/* A trickle: 1 MiB in 10 ms would take 80 ms to reach 8 MiB. */
	assert_int_equal(pace__next(&p, 1 * MIB, 100.020), 10);
}

static void the_rate_sets_the_timeout(void **state)
{
	struct pace p;

	(void)state;
	pace__init(&p, 64 * MIB, 1, 10);
	pace__next(&p, 0, 5.0);
	/* 4 MiB in 10 ms: 8 MiB (1/8 of the ring) in 20 ms, so the longest. */
	assert_int_equal(pace__next(&p, 4 * MIB, 5.010), 10);
	/* 16 MiB in 10 ms: 8 MiB in 5 ms. */
	assert_int_equal(pace__next(&p, 20 * MIB, 5.020), 5);
	/* 32 MiB in 5 ms: 8 MiB in 1.25 ms, to the nearest millisecond. */
	assert_int_equal(pace__next(&p, 52 * MIB, 5.025), 1);
}

static void never_below_the_shortest(void **state)
{
	struct pace p;

	(void)state;
	pace__init(&p, 2 * MIB, 1, 10);
	pace__next(&p, 0, 1.0);
	/* 1 MiB in 1 ms: 256 KiB in 0.25 ms, but no read is closer than 1 ms. */
	assert_int_equal(pace__next(&p, 1 * MIB, 1.001), 1);
}

static void positions_wrap_the_ring_many_times(void **state)
{
	uint64_t head = 1000 * 64 * MIB;
	struct pace p;

	(void)state;

	pace__init(&p, 64 * MIB, 1, 10);
	pace__next(&p, head, 7.0);
	/* Positions count every byte ever written: only the difference counts. */
	assert_int_equal(pace__next(&p, head + 16 * MIB, 7.010), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_read_and_quiet_wait_longest),
		cmocka_unit_test(the_rate_sets_the_timeout),
		cmocka_unit_test(never_below_the_shortest),
		cmocka_unit_test(positions_wrap_the_ring_many_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

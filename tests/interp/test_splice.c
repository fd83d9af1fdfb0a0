// SPDX-License-Identifier: MIT
/*
 * test_splice.c - unit tests of the splice of interpreter frames among
 * native ones (user/interp/splice.c): the shapes of Debian's
 * python3.11 stacks (one eval frame, several re-entered through C,
 * frames between them kept), and each way the two lists can disagree
 * (a cut native walk, a cut interpreter chain, a mismatch: cut=order),
 * the output's room.
 *
 * Native frames are small numbers, eval frames 100 and up; interpreter
 * frames 1000 and up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "interp/splice.h"

static bool is_eval(void *ctx, uint64_t ra)
{
	(void)ctx;
	return ra >= 100 && ra < 1000;
}

struct shape {
	uint64_t native[16];
	uint32_t nnative;
	bool native_cut;
	uint64_t iframes[16];
	uint32_t seg_end[8];
	uint32_t nseg;
	bool interp_cut;
};

static uint32_t run(const struct shape *s, uint64_t *out, uint32_t max, uint32_t *flags)
{
	struct splice_in in = { .native = s->native, .nnative = s->nnative,
				.native_cut = s->native_cut, .iframes = s->iframes,
				.seg_end = s->seg_end, .nseg = s->nseg, .interp_cut = s->interp_cut,
				.is_eval = is_eval };

	return splice__frames(&in, out, max, flags);
}

static void expect(const struct shape *s, const uint64_t *want, uint32_t nwant, uint32_t wflags)
{
	uint64_t out[64];
	uint32_t flags, n = run(s, out, 64, &flags);

	assert_int_equal(n, nwant);
	assert_memory_equal(out, want, nwant * sizeof(*want));
	assert_int_equal(flags, wflags);
}

/* PyByteArray_Resize <- _PyObject_MakeTpCall <- EVAL <- PyEval_EvalCode <- main */
static void test_one_eval(void **state)
{
	struct shape s = { .native = { 1, 2, 100, 3, 4 }, .nnative = 5,
			   .iframes = { 1000, 1001, 1002 }, .seg_end = { 3 }, .nseg = 1 };
	const uint64_t want[] = { 1, 2, 1000, 1001, 1002, 3, 4 };

	(void)state;
	expect(&s, want, 7, 0);
}

/* map() and a generator re-enter the loop: each eval frame its segment, C between kept. */
static void test_reentered(void **state)
{
	struct shape s = { .native = { 1, 100, 2, 3, 101, 4, 102, 5 }, .nnative = 8,
			   .iframes = { 1000, 1001, 1002, 1003, 1004 }, .seg_end = { 2, 3, 5 },
			   .nseg = 3 };
	const uint64_t want[] = { 1, 1000, 1001, 2, 3, 1002, 4, 1003, 1004, 5 };

	(void)state;
	expect(&s, want, 10, 0);
}

/* A segment of only frames not started: its eval frame goes, nothing in its place. */
static void test_empty_segment(void **state)
{
	struct shape s = { .native = { 1, 100, 2, 101, 3 }, .nnative = 5,
			   .iframes = { 1000 }, .seg_end = { 0, 1 }, .nseg = 2 };
	const uint64_t want[] = { 1, 2, 1000, 3 };

	(void)state;
	expect(&s, want, 4, 0);
}

/* The native walk was cut: the segments past it follow it, no order mark. */
static void test_native_cut(void **state)
{
	struct shape s = { .native = { 1, 100, 2 }, .nnative = 3, .native_cut = true,
			   .iframes = { 1000, 1001, 1002 }, .seg_end = { 1, 2, 3 }, .nseg = 3 };
	const uint64_t want[] = { 1, 1000, 2, 1001, 1002 };

	(void)state;
	expect(&s, want, 5, 0);
}

/* The interpreter's chain was cut: outer eval frames stay native frames. */
static void test_interp_cut(void **state)
{
	struct shape s = { .native = { 1, 100, 2, 101, 3 }, .nnative = 5, .interp_cut = true,
			   .iframes = { 1000, 1001 }, .seg_end = { 2 }, .nseg = 1 };
	const uint64_t want[] = { 1, 1000, 1001, 2, 101, 3 };

	(void)state;
	expect(&s, want, 6, 0);
}

/* Neither cut and more segments than eval frames: the rest at the outermost, cut=order. */
static void test_mismatch_more_segments(void **state)
{
	struct shape s = { .native = { 1, 100, 2, 101, 3 }, .nnative = 5,
			   .iframes = { 1000, 1001, 1002, 1003 }, .seg_end = { 1, 2, 3, 4 },
			   .nseg = 4 };
	const uint64_t want[] = { 1, 1000, 2, 1001, 1002, 1003, 3 };

	(void)state;
	expect(&s, want, 7, SPLICE_ORDER);
}

/* ... more eval frames than segments: the outer ones stay, cut=order. */
static void test_mismatch_more_evals(void **state)
{
	struct shape s = { .native = { 1, 100, 2, 101, 3 }, .nnative = 5,
			   .iframes = { 1000 }, .seg_end = { 1 }, .nseg = 1 };
	const uint64_t want[] = { 1, 1000, 2, 101, 3 };

	(void)state;
	expect(&s, want, 5, SPLICE_ORDER);
}

/* Frames but no eval frame at all (a whole native stack): after it, cut=order. */
static void test_no_eval(void **state)
{
	struct shape s = { .native = { 1, 2 }, .nnative = 2,
			   .iframes = { 1000, 1001 }, .seg_end = { 2 }, .nseg = 1 };
	const uint64_t want[] = { 1, 2, 1000, 1001 };

	(void)state;
	expect(&s, want, 4, SPLICE_ORDER);
}

/* The output's room: the outer frames dropped, said. */
static void test_room(void **state)
{
	struct shape s = { .native = { 1, 100, 2 }, .nnative = 3,
			   .iframes = { 1000, 1001, 1002 }, .seg_end = { 3 }, .nseg = 1 };
	uint64_t out[3];
	uint32_t flags, n;

	(void)state;
	n = run(&s, out, 3, &flags);
	assert_int_equal(n, 3);
	assert_true(out[0] == 1 && out[1] == 1000 && out[2] == 1001);
	assert_int_equal(flags, SPLICE_DEPTH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_eval),
		cmocka_unit_test(test_reentered),
		cmocka_unit_test(test_empty_segment),
		cmocka_unit_test(test_native_cut),
		cmocka_unit_test(test_interp_cut),
		cmocka_unit_test(test_mismatch_more_segments),
		cmocka_unit_test(test_mismatch_more_evals),
		cmocka_unit_test(test_no_eval),
		cmocka_unit_test(test_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

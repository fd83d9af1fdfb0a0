// SPDX-License-Identifier: MIT
/*
 * test_tracker.c - unit tests of the live-allocation table (user/tracer/tracker.c)
 * and the unique-stack table (user/common/stacks.c): random operations checked
 * against a plain reference array, the realloc ordering rule, pid drops,
 * and 10 million live allocations within 96 bytes each.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stacks.h"
#include "tracker.h"

static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Addresses from a small range so that inserts, hits and misses collide. */
#define RANGE 5000

static void test_random_against_reference(void **state)
{
	static uint64_t ref_size[2][RANGE];	/* [pid][addr], 0 = not live */
	struct tracker *t = tracker__new();
	uint64_t bytes = 0;
	size_t count = 0;

	(void)state;
	assert_non_null(t);
	memset(ref_size, 0, sizeof(ref_size));
	for (int i = 0; i < 2000000; i++) {
		uint32_t pid = rnd() & 1;
		uint64_t a = 1 + rnd() % RANGE, addr = a * 16;
		struct live_alloc e = { .addr = addr, .pid = pid + 100, .size = 1 + rnd() % 1000,
					.ts = (uint64_t)i, .stack = 7 }, old;
		int replaced;

		if (rnd() % 2) {
			assert_int_equal(tracker__alloc(t, &e, &old, &replaced), 0);
			assert_int_equal(replaced, ref_size[pid][a - 1] != 0);
			if (replaced) {
				assert_int_equal(old.size, ref_size[pid][a - 1]);
				bytes -= old.size;
				count--;
			}
			ref_size[pid][a - 1] = e.size;
			bytes += e.size;
			count++;
		} else {
			int err = tracker__release(t, pid + 100, addr, UINT64_MAX, &old);

			if (ref_size[pid][a - 1]) {
				assert_int_equal(err, 0);
				assert_int_equal(old.size, ref_size[pid][a - 1]);
				bytes -= old.size;
				count--;
				ref_size[pid][a - 1] = 0;
			} else {
				assert_int_equal(err, -ENOENT);
			}
		}
		assert_int_equal(tracker__count(t), count);
		assert_int_equal(tracker__bytes(t), bytes);
	}
	/* Dropping one pid leaves exactly the other's. */
	tracker__drop_pid(t, 100, NULL, NULL);
	count = 0;
	for (int a = 0; a < RANGE; a++)
		count += ref_size[1][a] != 0;
	assert_int_equal(tracker__count(t), count);
	for (int a = 0; a < RANGE; a++) {
		struct live_alloc old;

		if (ref_size[1][a])
			assert_int_equal(tracker__release(t, 101, (uint64_t)(a + 1) * 16, UINT64_MAX, &old), 0);
		assert_int_equal(tracker__release(t, 100, (uint64_t)(a + 1) * 16, UINT64_MAX, &old), -ENOENT);
	}
	assert_int_equal(tracker__count(t), 0);
	tracker__free(t);
}

/* A realloc releases its old block only if it was allocated before it began. */
static void test_release_before(void **state)
{
	struct tracker *t = tracker__new();
	struct live_alloc e = { .addr = 0x1000, .pid = 1, .size = 8, .ts = 500 }, old;
	int replaced;

	(void)state;
	assert_int_equal(tracker__alloc(t, &e, &old, &replaced), 0);
	/* The address was handed out again at 500, after a realloc began at 400. */
	assert_int_equal(tracker__release(t, 1, 0x1000, 400, &old), -EAGAIN);
	assert_int_equal(tracker__count(t), 1);
	/* A realloc that began at 600 owned it. */
	assert_int_equal(tracker__release(t, 1, 0x1000, 600, &old), 0);
	assert_int_equal(tracker__count(t), 0);
	tracker__free(t);
}

static void test_ten_million(void **state)
{
	const size_t n = 10000000;
	struct tracker *t = tracker__new();
	struct live_alloc old;
	int replaced;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		struct live_alloc e = { .addr = 0x7f0000000000ULL + i * 48, .pid = 42,
					.size = 48, .ts = i, .stack = (uint32_t)(i % 540) };

		assert_int_equal(tracker__alloc(t, &e, &old, &replaced), 0);
	}
	assert_int_equal(tracker__count(t), n);
	assert_int_equal(tracker__bytes(t), n * 48);
	/* 32-byte slots at 37.5%..75% load: at most 86 bytes per live block. */
	assert_true(tracker__memory(t) <= n * 86);
	for (size_t i = 0; i < n; i += 2)
		assert_int_equal(tracker__release(t, 42, 0x7f0000000000ULL + i * 48, UINT64_MAX, &old), 0);
	assert_int_equal(tracker__count(t), n / 2);
	tracker__free(t);
}

static void test_stacks_intern(void **state)
{
	struct stacks *st = stacks__new();
	uint64_t a[3] = { 0x401000, 0x402000, 0x403000 };
	char tok[HS_TOKEN_BUF], ref[HS_TOKEN_BUF];
	struct hs_record rec = { .size = 4096, .depth = 3 };
	int id;

	(void)state;
	id = stacks__intern(st, 1, a, 3, 0);
	assert_true(id >= 0);
	assert_int_equal(stacks__intern(st, 1, a, 3, 0), id);
	assert_int_not_equal(stacks__intern(st, 2, a, 3, 0), id);	/* other pid */
	assert_int_not_equal(stacks__intern(st, 1, a, 2, 0), id);	/* shorter */
	for (int i = 0; i < 100000; i++) {
		uint64_t f[2] = { (uint64_t)i, 7 };

		assert_true(stacks__intern(st, 1, f, 2, 0) >= 0);
	}
	assert_int_equal(stacks__intern(st, 1, a, 3, 0), id);
	assert_int_equal(stacks__count(st), 3 + 100000);
	/* The per-stack token equals the codec's for the same record. */
	memcpy(rec.frames, a, sizeof(a));
	assert_true(stacks__token(st, (uint32_t)id, 4096, tok, sizeof(tok)) > 0);
	assert_true(hs_token_encode(&rec, ref, sizeof(ref)) > 0);
	assert_string_equal(tok, ref);
	stacks__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_release_before),
		cmocka_unit_test(test_ten_million),
		cmocka_unit_test(test_stacks_intern),
	};

	return cmocka_run_group_tests_name("tracker", tests, NULL, NULL);
}

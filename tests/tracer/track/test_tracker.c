// SPDX-License-Identifier: MIT
/*
 * test_tracker.c - unit tests of the live-allocation table
 * (user/tracer/track/tracker.c) and the unique-stack table
 * (user/common/stacks.c): random operations checked against a plain
 * reference array (one table per process, and a table growing step by
 * step), the realloc ordering rule, and 10 million live allocations, all
 * still there.
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
#include "track/tracker.h"

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

/*
 * Two processes, one table each (as the trace keeps them): random allocs and
 * frees of the same addresses in both, checked against a reference after
 * every operation; one table's contents never touch the other's.
 */
static void test_random_against_reference(void **state)
{
	static uint64_t ref_size[2][RANGE];	/* [process][addr], 0 = not live */
	struct tracker *t[2] = { tracker__new(), tracker__new() };
	uint64_t bytes[2] = { 0 };
	size_t count[2] = { 0 };

	(void)state;
	assert_non_null(t[0]);
	assert_non_null(t[1]);
	memset(ref_size, 0, sizeof(ref_size));
	for (int i = 0; i < 2000000; i++) {
		unsigned int k = rnd() & 1;
		uint64_t a = 1 + rnd() % RANGE, addr = a * 16;
		struct live_alloc e = { .addr = addr, .size = 1 + rnd() % 1000,
					.seq = (uint64_t)i, .stack = 7 }, old;
		int replaced;

		if (rnd() % 2) {
			assert_int_equal(tracker__alloc(t[k], &e, &old, &replaced), 0);
			assert_int_equal(replaced, ref_size[k][a - 1] != 0);
			if (replaced) {
				assert_int_equal(old.size, ref_size[k][a - 1]);
				bytes[k] -= old.size;
				count[k]--;
			}
			ref_size[k][a - 1] = e.size;
			bytes[k] += e.size;
			count[k]++;
		} else {
			int err = tracker__release(t[k], addr, UINT64_MAX, &old);

			if (ref_size[k][a - 1]) {
				assert_int_equal(err, 0);
				assert_int_equal(old.size, ref_size[k][a - 1]);
				bytes[k] -= old.size;
				count[k]--;
				ref_size[k][a - 1] = 0;
			} else {
				assert_int_equal(err, -ENOENT);
			}
		}
		assert_int_equal(tracker__count(t[k]), count[k]);
		assert_int_equal(tracker__bytes(t[k]), bytes[k]);
	}
	/* Each table holds exactly its reference's entries. */
	for (unsigned int k = 0; k < 2; k++) {
		for (int a = 0; a < RANGE; a++) {
			struct live_alloc old;
			int err = tracker__release(t[k], (uint64_t)(a + 1) * 16, UINT64_MAX, &old);

			assert_int_equal(err, ref_size[k][a] ? 0 : -ENOENT);
		}
		assert_int_equal(tracker__count(t[k]), 0);
		assert_int_equal(tracker__bytes(t[k]), 0);
		tracker__free(t[k]);
	}
}

struct seen {
	const uint64_t *ref;	/* size by address index, 0 = not live */
	size_t n, count;
	uint64_t bytes;
	int bad;
};

static void see(const struct live_alloc *a, void *arg)
{
	struct seen *s = arg;
	uint64_t i = a->addr / 16 - 1;

	if (i >= s->n || s->ref[i] != a->size)
		s->bad++;
	s->count++;
	s->bytes += a->size;
}

/*
 * Growth under way: random allocs and frees while the table doubles from
 * 64 slots to 2^20 (14 growths), every lookup, release and walk checked
 * against a reference while entries sit in both the old and the new table.
 */
static void test_growth_against_reference(void **state)
{
	enum { N = 1 << 19 };
	uint64_t *ref = calloc(N, sizeof(*ref));
	struct tracker *t = tracker__new();
	size_t count = 0, walks_growing = 0;
	uint64_t bytes = 0;

	(void)state;
	assert_non_null(ref);
	for (int i = 0; i < 3 * N; i++) {
		/* Mostly allocations: the live set climbs through every size. */
		uint64_t a = rnd() % N, addr = (a + 1) * 16;
		struct live_alloc e = { .addr = addr, .size = 1 + rnd() % 4096, .seq = (uint64_t)i },
				  old;
		int replaced;

		if (rnd() % 4) {
			assert_int_equal(tracker__alloc(t, &e, &old, &replaced), 0);
			assert_int_equal(replaced, ref[a] != 0);
			if (replaced) {
				assert_int_equal(old.size, ref[a]);
				bytes -= old.size;
				count--;
			}
			ref[a] = e.size;
			bytes += e.size;
			count++;
		} else {
			int err = tracker__release(t, addr, UINT64_MAX, &old);

			assert_int_equal(err, ref[a] ? 0 : -ENOENT);
			if (ref[a]) {
				assert_int_equal(old.size, ref[a]);
				bytes -= ref[a];
				count--;
				ref[a] = 0;
			}
		}
		assert_int_equal(tracker__count(t), count);
		assert_int_equal(tracker__bytes(t), bytes);
		/* A walk while both tables hold entries sees each live one once. */
		if (tracker__growing(t) && i % 101 == 0) {
			struct seen s = { .ref = ref, .n = N };

			tracker__for_each(t, see, &s);
			assert_int_equal(s.bad, 0);
			assert_int_equal(s.count, count);
			assert_int_equal(s.bytes, bytes);
			walks_growing++;
		}
	}
	assert_true(walks_growing > 14);	/* during several growths */
	for (uint64_t a = 0; a < N; a++) {
		struct live_alloc old;

		assert_int_equal(tracker__release(t, (a + 1) * 16, UINT64_MAX, &old),
				 ref[a] ? 0 : -ENOENT);
	}
	assert_int_equal(tracker__count(t), 0);
	tracker__free(t);
	free(ref);
}

/* A realloc releases its old block only if it was allocated before it began. */
static void test_release_before(void **state)
{
	struct tracker *t = tracker__new();
	struct live_alloc e = { .addr = 0x1000, .size = 8, .seq = 500 }, old;
	int replaced;

	(void)state;
	assert_int_equal(tracker__alloc(t, &e, &old, &replaced), 0);
	/* The address was handed out again at 500, after a realloc began at 400. */
	assert_int_equal(tracker__release(t, 0x1000, 400, &old), -EAGAIN);
	assert_int_equal(tracker__count(t), 1);
	/* A realloc that began at 600 owned it. */
	assert_int_equal(tracker__release(t, 0x1000, 600, &old), 0);
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
		struct live_alloc e = { .addr = 0x7f0000000000ULL + i * 48, .size = 48,
					 .seq = i, .stack = (uint32_t)(i % 540) };

		assert_int_equal(tracker__alloc(t, &e, &old, &replaced), 0);
	}
	assert_int_equal(tracker__count(t), n);
	assert_int_equal(tracker__bytes(t), n * 48);
	/* 28-byte slots at 37.5%..75% load once grown: at most 75 bytes a block. */
	assert_false(tracker__growing(t));
	assert_true(tracker__memory(t) <= n * 75);
	for (size_t i = 0; i < n; i += 2)
		assert_int_equal(tracker__release(t, 0x7f0000000000ULL + i * 48, UINT64_MAX, &old), 0);
	assert_int_equal(tracker__count(t), n / 2);
	/* Every other one is still there, once. */
	for (size_t i = 1; i < n; i += 2)
		assert_int_equal(tracker__release(t, 0x7f0000000000ULL + i * 48, UINT64_MAX, &old), 0);
	assert_int_equal(tracker__count(t), 0);
	assert_int_equal(tracker__bytes(t), 0);
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

/* A stack of any depth: its record's tokens are records.h's, for every size. */
static void test_stacks_deep(void **state)
{
	static uint64_t f[REC_MAX_DEPTH + 1], back[REC_MAX_DEPTH];
	static char tok[REC_TOKENS_BUF], ref[REC_TOKENS_BUF];
	struct stacks *st = stacks__new();
	struct record r = { .type = REC_LIVE };
	uint64_t size;
	uint32_t depth;
	int id;

	(void)state;
	for (uint32_t i = 0; i <= REC_MAX_DEPTH; i++)
		f[i] = 0x55d0c3a4b000 + i * 0x31;
	assert_int_equal(stacks__intern(st, 1, f, REC_MAX_DEPTH + 1, 0), -EINVAL);
	id = stacks__intern(st, 1, f, 60, STACK_TRUNCATED | STACK_ORDER);
	assert_true(id >= 0);
	for (uint64_t sz = 1; sz < 1 << 20; sz <<= 7) {
		assert_int_equal(stacks__record(st, (uint32_t)id, sz, &r, tok, sizeof(tok)), 0);
		assert_int_equal(r.depth, 60);
		assert_int_equal(r.cut, REC_CUT_DEPTH | REC_CUT_ORDER);
		assert_int_equal(records__tokens(f, 60, sz, ref, sizeof(ref)), (int)r.token_len);
		assert_memory_equal(r.token, ref, r.token_len);
	}
	r.ntokens = 2;
	assert_int_equal(records__stack(&r, &size, back, &depth), 0);
	assert_int_equal(depth, 60);
	assert_memory_equal(back, f, 60 * sizeof(*f));
	/* Too small a buffer: said, no record. */
	assert_int_equal(stacks__record(st, (uint32_t)id, 1, &r, tok, 40), -HS_ENOSPC);
	assert_null(r.token);
	/* At most 31 frames: one token, no depth=. */
	id = stacks__intern(st, 1, f, 31, 0);
	assert_int_equal(stacks__record(st, (uint32_t)id, 8, &r, tok, HS_TOKEN_BUF), 0);
	assert_int_equal(r.depth, 0);
	assert_null(strchr(r.token, ' '));
	id = stacks__intern(st, 1, f, REC_MAX_DEPTH, 0);
	assert_int_equal(stacks__record(st, (uint32_t)id, 8, &r, tok, sizeof(tok)), 0);
	assert_int_equal(r.depth, REC_MAX_DEPTH);
	stacks__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_growth_against_reference),
		cmocka_unit_test(test_release_before),
		cmocka_unit_test(test_ten_million),
		cmocka_unit_test(test_stacks_intern),
		cmocka_unit_test(test_stacks_deep),
	};

	return cmocka_run_group_tests_name("tracker", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_tracker.c - unit tests of the live-allocation table
 * (user/tracer/track/tracker.c) and the tree of unique stacks
 * (user/tracer/track/stacktree.c): random operations checked against a
 * plain reference array (one table per process, and a table growing step
 * by step), the realloc ordering rule, and 10 million live allocations,
 * all still there; stacks against a reference, each shape of the tree,
 * and a million of them in 64 bytes each at most.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "records.h"
#include "stacks.h"
#include "track/stacktree.h"
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

/* A stack of the reference: its frames, flags and the id the tree gave it. */
struct ref_stack {
	uint32_t depth, flags, id;
	uint64_t frames[40];
};

static int by_content(const void *a, const void *b)
{
	const struct ref_stack *x = a, *y = b;

	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return memcmp(x->frames, y->frames, x->depth * sizeof(*x->frames));
}

/*
 * Stacks drawn from a few frames, so that they share their roots, end
 * inside others' runs, go on from others' ends, and repeat: each
 * interned twice gets one id; equal stacks (frames and cut flags) one
 * id, others another; each reads back its frames and flags; each
 * payload stays its own through the splits and the index's growth.
 */
static void test_tree_against_reference(void **state)
{
	static struct ref_stack ref[60000];
	static const uint64_t alphabet[] = { 0, 1, 0x401000, 0x401005, 0x7f0000001234,
					     0x7f0000001200, 1ULL << 62 | 7, UINT64_MAX,
					     1ULL << 63 };
	const size_t n = sizeof(ref) / sizeof(ref[0]);
	struct stack_tree *st = stack_tree__new();
	uint64_t back[REC_MAX_DEPTH];
	bool created;
	uint32_t id;
	size_t distinct = 0;

	(void)state;
	assert_non_null(st);
	for (size_t i = 0; i < n; i++) {
		struct ref_stack *r = &ref[i];
		/* Long shared roots (the first frames drawn are the outermost). */
		uint32_t shared = (uint32_t)(rnd() % 30);

		r->depth = (uint32_t)(rnd() % 40);
		r->flags = rnd() % 8 == 0 ? (uint32_t)(rnd() % 8) : 0;
		for (uint32_t k = 0; k < r->depth; k++) {
			uint32_t from_root = r->depth - 1 - k;

			r->frames[k] = from_root < shared ? 0x55d0c3a4b000ULL + from_root * 0x40ULL :
				       alphabet[rnd() % (rnd() % 4 ? 3 : 9)];
		}
		assert_int_equal(stack_tree__intern(st, r->frames, r->depth, r->flags, &r->id,
						    &created), 0);
		if (created) {
			unsigned char *pl = stack_tree__payload(st, r->id);

			for (int k = 0; k < STACK_TREE_PAYLOAD; k++)
				assert_int_equal(pl[k], 0);
			memcpy(pl, &r->id, sizeof(r->id));
			distinct++;
		}
		assert_int_equal(stack_tree__intern(st, r->frames, r->depth, r->flags, &id,
						    &created), 0);
		assert_false(created);
		assert_int_equal(id, r->id);
	}
	assert_int_equal(stack_tree__count(st), distinct);
	qsort(ref, n, sizeof(*ref), by_content);
	for (size_t i = 0; i < n; i++) {
		uint32_t depth = stack_tree__frames(st, ref[i].id, back), mark;

		assert_int_equal(depth, ref[i].depth);
		assert_memory_equal(back, ref[i].frames, depth * sizeof(*back));
		assert_int_equal(stack_tree__flags(st, ref[i].id), ref[i].flags);
		memcpy(&mark, stack_tree__payload(st, ref[i].id), sizeof(mark));
		assert_int_equal(mark, ref[i].id);
		if (i)
			assert_int_equal(by_content(&ref[i - 1], &ref[i]) == 0,
					 ref[i - 1].id == ref[i].id);
	}
	stack_tree__free(st);
}

/*
 * The shapes one at a time: a stack inside another's run (the run cut,
 * the new stack its first part), one that goes on from another's end,
 * one that ends where two runs part (a node of no frames), the empty
 * stack, the same frames cut; the deepest stack (a chain of nodes) and
 * stacks that end in or leave its chain; too deep, bad flags.
 */
static void test_tree_shapes(void **state)
{
	static uint64_t deep[REC_MAX_DEPTH + 1], back[REC_MAX_DEPTH];
	const uint64_t abc[] = { 0x30, 0x20, 0x10 };	/* innermost first: root 0x10 */
	const uint64_t abd[] = { 0x31, 0x20, 0x10 };
	struct stack_tree *st = stack_tree__new();
	struct stack_tree_stats ts;
	uint32_t id[8], x;
	bool created;

	(void)state;
	assert_int_equal(stack_tree__intern(st, abc, 3, 0, &id[0], &created), 0);
	assert_true(created);
	/* [0x20, 0x10]: ends inside abc's run. */
	assert_int_equal(stack_tree__intern(st, abc + 1, 2, 0, &id[1], &created), 0);
	assert_true(created);
	assert_int_equal(stack_tree__frames(st, id[1], back), 2);
	assert_int_equal(back[0], 0x20);
	assert_int_equal(stack_tree__frames(st, id[0], back), 3);
	assert_int_equal(back[0], 0x30);
	/* abd parts from abc after 0x20, where [0x20, 0x10] ends. */
	assert_int_equal(stack_tree__intern(st, abd, 3, 0, &id[2], &created), 0);
	assert_true(created);
	/* [0x10]: ends where nothing did: a node of no frames under it. */
	assert_int_equal(stack_tree__intern(st, abc + 2, 1, 0, &id[3], &created), 0);
	assert_true(created);
	assert_int_equal(stack_tree__frames(st, id[3], back), 1);
	assert_int_equal(stack_tree__intern(st, abc + 2, 1, 0, &x, &created), 0);
	assert_int_equal(x, id[3]);
	/* No frames; and abc cut: stacks of their own. */
	assert_int_equal(stack_tree__intern(st, abc, 0, 0, &id[4], &created), 0);
	assert_int_equal(stack_tree__frames(st, id[4], back), 0);
	assert_int_equal(stack_tree__intern(st, abc, 0, STACK_FAULT, &id[5], &created), 0);
	assert_int_not_equal(id[5], id[4]);
	assert_int_equal(stack_tree__intern(st, abc, 3, STACK_TRUNCATED, &id[6], &created), 0);
	assert_int_not_equal(id[6], id[0]);
	assert_int_equal(stack_tree__flags(st, id[6]), STACK_TRUNCATED);
	assert_int_equal(stack_tree__count(st), 7);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < i; j++)
			assert_int_not_equal(id[i], id[j]);
	/* The deepest, and one past it. */
	for (uint32_t i = 0; i <= REC_MAX_DEPTH; i++)
		deep[i] = 0x55d0c3a4b000 + (i % 7) * 0x31 + (i % 3) * 0x1000000;
	assert_int_equal(stack_tree__intern(st, deep, REC_MAX_DEPTH + 1, 0, &x, &created), -EINVAL);
	assert_int_equal(stack_tree__intern(st, deep, 3, 8, &x, &created), -EINVAL);
	assert_int_equal(stack_tree__intern(st, deep, REC_MAX_DEPTH, 0, &id[7], &created), 0);
	assert_int_equal(stack_tree__frames(st, id[7], back), REC_MAX_DEPTH);
	assert_memory_equal(back, deep, REC_MAX_DEPTH * sizeof(*back));
	/*
	 * Its run is a chain of nodes of REC_NODE_MAX_FRAMES: a stack that
	 * ends inside one (its outer 3000 frames), one that leaves it inside
	 * another (its outer 5000 the same, then its own), each whole; the
	 * deepest found again.
	 */
	assert_int_equal(stack_tree__intern(st, deep + REC_MAX_DEPTH - 3000, 3000, 0, &x,
					    &created), 0);
	assert_true(created);
	assert_int_equal(stack_tree__frames(st, x, back), 3000);
	assert_memory_equal(back, deep + REC_MAX_DEPTH - 3000, 3000 * sizeof(*back));
	deep[REC_MAX_DEPTH - 5001] ^= 0x8;
	assert_int_equal(stack_tree__intern(st, deep, REC_MAX_DEPTH, 0, &x, &created), 0);
	assert_true(created);
	assert_int_equal(stack_tree__frames(st, x, back), REC_MAX_DEPTH);
	assert_memory_equal(back, deep, REC_MAX_DEPTH * sizeof(*back));
	deep[REC_MAX_DEPTH - 5001] ^= 0x8;
	assert_int_equal(stack_tree__intern(st, deep, REC_MAX_DEPTH, 0, &x, &created), 0);
	assert_true(!created && x == id[7]);
	assert_int_equal(stack_tree__frames(st, id[7], back), REC_MAX_DEPTH);
	assert_memory_equal(back, deep, REC_MAX_DEPTH * sizeof(*back));
	stack_tree__stats(st, &ts);
	assert_int_equal(ts.stacks, 10);
	assert_true(ts.frames >= REC_MAX_DEPTH + 5);
	assert_true(stack_tree__memory(st) >= ts.used_bytes + ts.index_bytes);
	stack_tree__free(st);
}

static int count_node(void *ctx, uint32_t id)
{
	(void)id;
	(*(size_t *)ctx)++;
	return 0;
}

/*
 * A million stacks of two frames: what a stack of its own costs at
 * scale, as prog_paths makes them (the tree's nodes and index, the
 * payload), at most 64 bytes.
 */
static void test_tree_per_stack(void **state)
{
	struct stack_tree *st = stack_tree__new();
	const uint32_t n = 1u << 20;
	size_t nodes = 0;
	uint32_t id;
	bool created;

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		/* A binary tree 20 deep of two call sites, as prog_paths's. */
		uint64_t f[21];

		for (int k = 0; k < 20; k++)
			f[k] = 0x55d0c3a4b244 + (i >> k & 1) * 0x18;
		f[20] = 0x55d0c3a4b3a5;
		assert_int_equal(stack_tree__intern(st, f, 21, 0, &id, &created), 0);
		assert_true(created);
	}
	assert_int_equal(stack_tree__for_each(st, true, count_node, &nodes), 0);
	assert_int_equal(stack_tree__count(st), n);
	assert_int_equal(nodes, 2 * n - 1);
	print_message("%.1f bytes per stack\n", (double)stack_tree__memory(st) / n);
	assert_true(stack_tree__memory(st) <= 64ULL * n);
	stack_tree__free(st);
}

/*
 * 2^16 stacks as a compiler's: a shared root, 16 levels of two frames
 * each (a call in one library, its callee in another, 100 MB away: 4
 * bytes of varint a frame), each level's pair one of two by a bit of the
 * stack's number, and 3 frames of its own at the leaf: every branch
 * splits a run of frames of 8 bytes. Its nodes, index and counts at most
 * 66 bytes a stack: 64 (a branch a ref node of 20 bytes, each frame held
 * once, 8 bytes of counts); 80 when a split copied its first part into
 * the new branch, its bytes then held twice, and counts took 12.
 */
static void test_tree_per_stack_far(void **state)
{
	struct stack_tree *st = stack_tree__new();
	const uint32_t n = 1u << 16;
	const uint64_t lib_a = 0x7ffff4600000, lib_b = 0x7fffedc00000;
	uint32_t id;
	bool created;

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t f[3 + 32 + 4];
		uint32_t k = 0;

		for (int j = 0; j < 3; j++)
			f[k++] = lib_a + 0x100000 * (uint64_t)j + (i * 2654435761u >> 8 & 0xfffff);
		for (int l = 15; l >= 0; l--) {
			f[k++] = lib_b + 0x40000 * (uint64_t)l + (i >> l & 1) * 0x1230;
			f[k++] = lib_a + 0x40000 * (uint64_t)l + (i >> l & 1) * 0x2340;
		}
		for (int j = 0; j < 4; j++)
			f[k++] = 0x555555554000 + 0x40 * (uint64_t)j;
		assert_int_equal(stack_tree__intern(st, f, k, 0, &id, &created), 0);
		assert_true(created);
	}
	assert_int_equal(stack_tree__count(st), n);
	print_message("%.1f bytes per stack\n", (double)stack_tree__memory(st) / n);
	assert_true(stack_tree__memory(st) <= 66ULL * n);
	stack_tree__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_growth_against_reference),
		cmocka_unit_test(test_release_before),
		cmocka_unit_test(test_ten_million),
		cmocka_unit_test(test_tree_against_reference),
		cmocka_unit_test(test_tree_shapes),
		cmocka_unit_test(test_tree_per_stack),
		cmocka_unit_test(test_tree_per_stack_far),
	};

	return cmocka_run_group_tests_name("tracker", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_namecache.c - unit tests of the live view's name cache
 * (user/tracer/output/namecache.c) and of the rule that picks the frame
 * it shows first, holders__is_runtime() (user/common/holders.c, the
 * headline's too): a cache of many modules' names stays within its bound
 * over many redraws, the names a child reports used stay, those unused
 * go, least recently used first; with every name in use it stays full
 * and keeps no more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "holders.h"
#include "output/namecache.h"

#define MAX 64

/* Module @m's frame @k named "f<m>_<k>". */
static struct name_ent *add(struct namecache *nc, int m, int k)
{
	char key[32], func[32];

	snprintf(key, sizeof(key), "/lib/libm%d.so", m);
	snprintf(func, sizeof(func), "f%d_%d", m, k);
	return namecache__add(nc, key, (uint64_t)k * 16, func, "x.c:1");
}

static bool has(struct namecache *nc, int m, int k)
{
	char key[32];

	snprintf(key, sizeof(key), "/lib/libm%d.so", m);
	return namecache__find(nc, key, (uint64_t)k * 16) != NULL;
}

/* One redraw as the loader sees it: a new generation, then the child's reports. */
static void redraw_using(struct namecache *nc, int m, int n)
{
	namecache__next(nc);
	for (int k = 0; k < n; k++) {
		char key[32];
		struct name_ent *e;

		snprintf(key, sizeof(key), "/lib/libm%d.so", m);
		e = namecache__find(nc, key, (uint64_t)k * 16);
		if (e && namecache__stale(nc, e))
			namecache__touch(nc, e);
	}
}

static void test_find_add(void **state)
{
	struct namecache *nc = namecache__new(MAX);
	struct name_ent *e;

	(void)state;
	assert_non_null(nc);
	assert_non_null(add(nc, 1, 1));
	assert_null(add(nc, 1, 1));	/* kept already */
	e = namecache__find(nc, "/lib/libm1.so", 16);
	assert_non_null(e);
	assert_string_equal(e->func, "f1_1");
	assert_string_equal(e->loc, "x.c:1");
	assert_null(namecache__find(nc, "/lib/libm1.so", 32));
	assert_null(namecache__find(nc, "/lib/libm2.so", 16));
	namecache__free(nc);
}

/*
 * Many modules, a redraw each, none used again (processes that came and
 * went): the cache never holds more than its bound, every name kept is
 * evicted or still there, and the names of a module are gone
 * NAMECACHE_TOUCH + 1 redraws after it was last used.
 */
static void test_bounded_over_many_modules(void **state)
{
	struct namecache *nc = namecache__new(MAX);
	size_t evicted = 0, kept = 0, most = 0;

	(void)state;
	for (int m = 0; m < 1000; m++) {
		for (int k = 0; k < 10; k++)
			kept += add(nc, m, k) != NULL;
		if (namecache__count(nc) > most)
			most = namecache__count(nc);
		evicted += namecache__next(nc);
	}
	assert_true(most <= MAX);
	assert_int_equal(kept, evicted + namecache__count(nc));
	assert_true(kept > 5000);	/* it turned over: names were kept all along */
	for (int m = 0; m < 1000 - NAMECACHE_TOUCH - 1; m++)
		for (int k = 0; k < 10; k++)
			assert_false(has(nc, m, k));
	namecache__free(nc);
}

/* Names in use at every redraw stay, those no longer used go. */
static void test_used_stay(void **state)
{
	struct namecache *nc = namecache__new(MAX);

	(void)state;
	for (int k = 0; k < 16; k++)
		assert_non_null(add(nc, 0, k));	/* the hot module */
	for (int k = 0; k < 48; k++)
		assert_non_null(add(nc, 1, k));	/* seen once */
	assert_int_equal(namecache__count(nc), MAX);
	assert_null(add(nc, 2, 0));		/* full: not kept */
	for (int r = 0; r < 3 * NAMECACHE_TOUCH; r++)
		redraw_using(nc, 0, 16);
	for (int k = 0; k < 16; k++)
		assert_true(has(nc, 0, k));
	for (int k = 0; k < 48; k++)
		assert_false(has(nc, 1, k));
	assert_non_null(add(nc, 2, 0));		/* room again */
	namecache__free(nc);
}

/* Every name in use: nothing goes, nothing more is kept. */
static void test_all_in_use(void **state)
{
	struct namecache *nc = namecache__new(MAX);

	(void)state;
	for (int k = 0; k < MAX; k++)
		add(nc, 0, k);
	for (int r = 0; r < 5 * NAMECACHE_TOUCH; r++)
		redraw_using(nc, 0, MAX);
	assert_int_equal(namecache__count(nc), MAX);
	assert_null(add(nc, 1, 0));
	namecache__free(nc);
}

/* A child reports a name once per NAMECACHE_TOUCH redraws, not at each use. */
static void test_stale_once(void **state)
{
	struct namecache *nc = namecache__new(MAX);
	struct name_ent *e = add(nc, 0, 0);
	int reports = 0;

	(void)state;
	for (int r = 0; r < 4 * NAMECACHE_TOUCH; r++) {
		namecache__next(nc);
		/* Three uses in one redraw: one report at most. */
		for (int u = 0; u < 3; u++)
			reports += namecache__stale(nc, e);
	}
	assert_int_equal(reports, 4);
	namecache__free(nc);
}

/* The one rule of "the C runtime's own", for the live view and the headline. */
static void test_is_runtime(void **state)
{
	struct sym_frame f;

	(void)state;
	f = (struct sym_frame){ .status = SYM_NO_SYMBOL, .module = "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	assert_true(holders__is_runtime(&f));
	f.module = "/lib64/ld-linux-x86-64.so.2";
	assert_true(holders__is_runtime(&f));
	f.module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	assert_true(holders__is_runtime(&f));
	f.module = "/usr/lib/libc++abi.so.1";
	assert_true(holders__is_runtime(&f));
	f.module = "/usr/lib/x86_64-linux-gnu/libcapstone.so.5";
	assert_false(holders__is_runtime(&f));
	/* A static program's own allocator, named: the allocator's. */
	f = (struct sym_frame){ .status = SYM_OK, .func = "malloc", .module = "/usr/bin/prog" };
	assert_true(holders__is_runtime(&f));
	f.func = "operator new(unsigned long)";
	assert_true(holders__is_runtime(&f));
	f.func = "top_leak";
	assert_false(holders__is_runtime(&f));
	/* Not named: only its module says. */
	f = (struct sym_frame){ .status = SYM_NO_SYMBOL, .module = "/usr/bin/prog" };
	assert_false(holders__is_runtime(&f));
	/* An interpreter's frame is the program's, whatever its name. */
	f = (struct sym_frame){ .status = SYM_OK, .func = "malloc", .kind = "python",
				.module = "[python]" };
	assert_false(holders__is_runtime(&f));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_add),
		cmocka_unit_test(test_bounded_over_many_modules),
		cmocka_unit_test(test_used_stay),
		cmocka_unit_test(test_all_in_use),
		cmocka_unit_test(test_stale_once),
		cmocka_unit_test(test_is_runtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_htab.c - unit tests of the generic hash table (user/common/htab.c):
 * random adds, finds and deletes against a plain reference array, with a
 * hash so poor that probe runs are long and wrap around (what backward-shift
 * deletion can get wrong); iteration; keys compared by a caller's function.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "htab.h"

#define RANGE 3000

/* Knuth's MMIX LCG, high bits: reproducible, good enough to mix operations. */
static uint64_t lcg = 1;

static uint64_t rnd(void)
{
	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return lcg >> 17;
}

/* Few distinct hashes, high bits too: runs collide and wrap. */
static uint64_t poor_hash(uintptr_t key)
{
	return (key % 37) * 0x0400000000000001ULL;
}

static void test_random_against_reference(void **state)
{
	static uintptr_t ref[RANGE];	/* value, 0: absent */
	struct htab *h = htab__new(8, NULL, NULL);
	size_t count = 0;

	(void)state;
	assert_non_null(h);
	memset(ref, 0, sizeof(ref));
	for (int i = 0; i < 400000; i++) {
		uintptr_t key = rnd() % RANGE, value = (uintptr_t)i + 1;
		void *got = htab__find(h, poor_hash(key), key);

		assert_true((uintptr_t)got == ref[key]);
		if (rnd() % 3) {
			if (ref[key])
				continue;
			assert_int_equal(htab__add(h, poor_hash(key), key, (void *)value), 0);
			ref[key] = value;
			count++;
		} else {
			assert_true((uintptr_t)htab__delete(h, poor_hash(key), key) == ref[key]);
			count -= ref[key] != 0;
			ref[key] = 0;
		}
		assert_int_equal(htab__count(h), count);
	}
	for (uintptr_t k = 0; k < RANGE; k++)
		assert_true((uintptr_t)htab__find(h, poor_hash(k), k) == ref[k]);
	htab__free(h);
}

static void test_iterate(void **state)
{
	struct htab *h = htab__new(8, NULL, NULL);
	size_t pos = 0, seen = 0;
	uintptr_t key, sum = 0;
	void *v;

	(void)state;
	for (uintptr_t k = 1; k <= 1000; k++)
		assert_int_equal(htab__add(h, htab_hash2(k, 0), k, (void *)(k * 2)), 0);
	while ((v = htab__next(h, &pos, &key))) {
		assert_true((uintptr_t)v == key * 2);
		sum += key;
		seen++;
	}
	assert_int_equal(seen, 1000);
	assert_int_equal(sum, 1000 * 1001 / 2);
	assert_true(htab__memory(h) >= 1000 * 4 / 3);
	htab__free(h);
}

struct name {
	const char *s;
};

static bool same_name(uintptr_t stored, uintptr_t probe, void *ctx)
{
	(void)ctx;
	return !strcmp(((const struct name *)stored)->s, (const char *)probe);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* Stored keys point into values; a probe is of another type (a string). */
static void test_custom_equal(void **state)
{
	static struct name names[] = { { "libc.so.6" }, { "ld-linux.so.2" }, { "libm.so.6" } };
	struct htab *h = htab__new(8, same_name, NULL);

	(void)state;
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(htab__add(h, str_hash(names[i].s), (uintptr_t)&names[i],
					   &names[i]), 0);
	assert_ptr_equal(htab__find(h, str_hash("libm.so.6"), (uintptr_t)"libm.so.6"), &names[2]);
	assert_null(htab__find(h, str_hash("libz.so.1"), (uintptr_t)"libz.so.1"));
	assert_ptr_equal(htab__delete(h, str_hash("libc.so.6"), (uintptr_t)"libc.so.6"), &names[0]);
	assert_null(htab__find(h, str_hash("libc.so.6"), (uintptr_t)"libc.so.6"));
	assert_int_equal(htab__count(h), 2);
	htab__free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_iterate),
		cmocka_unit_test(test_custom_equal),
	};

	return cmocka_run_group_tests_name("htab", tests, NULL, NULL);
}

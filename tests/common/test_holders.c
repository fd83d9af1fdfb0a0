// SPDX-License-Identifier: MIT
/*
 * test_holders.c - unit tests of who holds the live heap
 * (user/common/holders.c), frames named by a table here: a helper's
 * stacks summed whatever their number, named by their biggest stack;
 * callers summed under it; the allocator's and the C runtime's frames
 * passed over; an interpreter's frame holding before the C below it; a
 * baseline's signed differences.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "holders.h"
#include "records.h"

/* Each frame by its address: function, file, line, module, kind. */
static const struct {
	uint64_t addr;
	const char *func, *file;
	int line;
	const char *module, *kind;
} names[] = {
	{ 0x100, "malloc", "malloc.c", 1, "/lib/libc.so.6", NULL },
	{ 0x200, "helper", "h.c", 10, "/bin/prog", NULL },
	{ 0x201, "helper", "h.c", 11, "/bin/prog", NULL },
	{ 0x300, "read_a", "a.c", 5, "/bin/prog", NULL },
	{ 0x400, "read_b", "b.c", 7, "/bin/prog", NULL },
	{ 0x500, "big_table", "t.c", 3, "/bin/prog", NULL },
	{ 0x600, "main", "m.c", 20, "/bin/prog", NULL },
	{ 0x700, "PyBytes_FromSize", "bytes.c", 90, "/usr/bin/python3.11", NULL },
	{ REC_FRAME_BASE + 1, "remember", "leak.py", 12, "[python]", "python" },
	{ REC_FRAME_BASE + 2, "handle", "leak.py", 17, "[python]", "python" },
};

static bool lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	(void)ctx;
	(void)pid;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].addr != addr)
			continue;
		*f = (struct sym_frame){ .status = SYM_OK, .func = names[i].func,
					 .file = names[i].file, .line = names[i].line,
					 .module = names[i].module, .kind = names[i].kind };
		return true;
	}
	return false;
}

/* A million stacks of one helper: one holder, every byte, no entry per stack. */
static void test_many_stacks_one_holder(void **state)
{
	struct holders *h = holders__new(lookup, NULL, false);
	const uint64_t a[] = { 0x100, 0x200, 0x300, 0x600 };
	const struct holder *v;
	char line[256];
	size_t n;

	(void)state;
	for (int i = 0; i < 1000000; i++)
		assert_int_equal(holders__add(h, 1, a, 4, 16, 1, i % 10 == 0), 0);
	v = holders__list(h, &n);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].func, "helper");
	assert_int_equal(v[0].bytes, 16000000);
	assert_int_equal(v[0].count, 1000000);
	assert_int_equal(v[0].cut, 100000);
	assert_int_equal(v[0].ncallers, 1);
	assert_string_equal(v[0].callers[0].name, "read_a (a.c:5)");
	assert_true(holders__headline(h, "biggest holder", line, sizeof(line)));
	assert_string_equal(line, "biggest holder: 15.3 MiB in 1000000 blocks, helper (h.c:10) <- read_a (a.c:5)");
	holders__free(h);
}

/*
 * helper at h.c:10 from read_a in 3 stacks of 10 bytes, at h.c:11 from
 * read_b in one of 20: 50 bytes, its place and caller its biggest
 * stack's (h.c:11 <- read_b), read_a's 30 bytes first among its callers.
 * big_table's one stack of 40 is second. Added after the list was made:
 * the list made again.
 */
static void test_named_by_biggest_stack(void **state)
{
	struct holders *h = holders__new(lookup, NULL, false);
	const uint64_t a[] = { 0x100, 0x200, 0x300 }, b[] = { 0x100, 0x201, 0x400 };
	const uint64_t t[] = { 0x100, 0x500, 0x600 };
	const struct holder *v;
	char line[256];
	size_t n;

	(void)state;
	for (int i = 0; i < 3; i++)
		holders__add(h, 1, a, 3, 10, 1, 0);
	holders__add(h, 1, t, 3, 40, 1, 0);
	v = holders__list(h, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].func, "big_table");
	holders__add(h, 1, b, 3, 20, 1, 0);
	v = holders__list(h, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].func, "helper");
	assert_int_equal(v[0].bytes, 50);
	assert_int_equal(v[0].count, 4);
	assert_string_equal(v[0].where, "h.c:11");
	assert_string_equal(v[0].caller, "read_b (b.c:7)");
	assert_int_equal(v[0].ncallers, 2);
	assert_string_equal(v[0].callers[0].name, "read_a (a.c:5)");
	assert_int_equal(v[0].callers[0].bytes, 30);
	assert_string_equal(v[0].callers[1].name, "read_b (b.c:7)");
	assert_int_equal(v[0].callers[1].bytes, 20);
	assert_string_equal(v[1].func, "big_table");
	assert_true(holders__headline(h, "biggest holder", line, sizeof(line)));
	assert_string_equal(line, "biggest holder: 50 bytes in 4 blocks, helper (h.c:11) <- read_b (b.c:7)");
	holders__free(h);
}

/* A Python frame holds, not the interpreter's C below it; its caller the next one out. */
static void test_interpreter_frame_holds(void **state)
{
	struct holders *h = holders__new(lookup, NULL, false);
	const uint64_t s[] = { 0x100, 0x700, REC_FRAME_BASE + 1, REC_FRAME_BASE + 2, 0x600 };
	char line[256];

	(void)state;
	holders__add(h, 1, s, 5, 4096, 1, 0);
	assert_true(holders__headline(h, "biggest holder", line, sizeof(line)));
	assert_string_equal(line, "biggest holder: 4.0 KiB in 1 block, remember (leak.py:12) <- handle (leak.py:17)");
	holders__free(h);
}

/*
 * A thread's start: glibc's names on both architectures, arm64's clone3
 * label thread_start in the C library only (a program's is its own code).
 */
static void test_thread_start(void **state)
{
	struct sym_frame f = { .status = SYM_OK, .func = "thread_start",
			       .module = "/usr/lib/aarch64-linux-gnu/libc.so.6" };

	(void)state;
	assert_true(holders__is_start(&f));
	f.func = "start_thread";
	assert_true(holders__is_start(&f));
	f.func = "thread_start";
	f.module = "/bin/prog";
	assert_false(holders__is_start(&f));
	f.module = NULL;
	assert_false(holders__is_start(&f));
	f.func = "__clone3";
	assert_true(holders__is_start(&f));
}

/* Differences: signed, a shrink summed with a growth. */
static void test_diff(void **state)
{
	struct holders *h = holders__new(lookup, NULL, true);
	const uint64_t a[] = { 0x200, 0x300 };
	char line[256];

	(void)state;
	holders__add(h, 1, a, 2, 3000, 3, 0);
	holders__add(h, 1, a, 2, (uint64_t)-1000, (uint64_t)-1, 0);
	assert_true(holders__headline(h, "biggest growth", line, sizeof(line)));
	assert_string_equal(line, "biggest growth: +2.0 KiB in +2 blocks, helper (h.c:10) <- read_a (a.c:5)");
	holders__free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_stacks_one_holder),
		cmocka_unit_test(test_named_by_biggest_stack),
		cmocka_unit_test(test_interpreter_frame_holds),
		cmocka_unit_test(test_thread_start),
		cmocka_unit_test(test_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

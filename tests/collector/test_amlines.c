// SPDX-License-Identifier: MIT
/*
 * test_amlines.c - hs_am__dump_lines() (user/collector/amlines.c), the
 * alloc-metadata dump without stdio that a firmware writes to its UART,
 * held against hs_am__dump() (amdump.c, records.c's writers) on the same
 * lists: byte for byte the same lines, for an empty list, blocks of 0 to
 * 31 frames of 32- and 64-bit addresses, every cut, a sampled list, a long
 * reason; a writer's error ends the dump and leaves the lock free. ASan+UBSan.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heapsnoop/alloc_metadata.h"
#include "records.h"

struct sink {
	char buf[1 << 16];
	size_t len;
	int calls, fail_at;	/* fail the fail_at'th call (1-based); 0: never */
};

static int sink_write(void *arg, const char *buf, size_t len)
{
	struct sink *s = arg;

	s->calls++;
	if (s->fail_at && s->calls == s->fail_at)
		return -EIO;
	assert_true(len > 0 && buf[len - 1] == '\n');	/* one whole line a call */
	assert_true(s->len + len <= sizeof(s->buf));
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
	return 0;
}

/* The stdio dump of @am, and the line-writer's with the same time=: equal. */
static void expect_same(struct hs_am *am, int pid, const char *reason)
{
	char *ref = NULL;
	size_t ref_len = 0;
	FILE *f = open_memstream(&ref, &ref_len);
	struct sink *s = calloc(1, sizeof(*s));
	struct record r;

	assert_non_null(f);
	assert_non_null(s);
	assert_int_equal(hs_am__dump(am, f, pid, reason, NULL, NULL), 0);
	fclose(f);
	assert_int_equal(records__parse(ref, &r), 0);
	assert_int_equal(r.type, REC_DUMP);
	assert_int_equal(hs_am__dump_lines(am, sink_write, s, pid, reason,
					   (uint64_t)r.time_s * 1000 + r.time_ms), 0);
	assert_int_equal(s->len, ref_len);
	assert_memory_equal(s->buf, ref, ref_len);
	free(ref);
	free(s);
}

static void *place(struct hs_am *am, uint64_t size, const uint64_t *frames, uint32_t depth,
		   uint32_t cut)
{
	struct hs_am_site site;
	size_t total = hs_am_site__prepare(&site, size, 16, frames, depth, NULL);
	/* The list never touches the user's bytes: the head and 16 are enough. */
	void *block = total ? aligned_alloc(16, site.head + 16) : NULL;

	assert_non_null(block);
	site.cut = cut;
	return hs_am__place(am, &site, block);
}

static void test_same_lines(void **state)
{
	static const uint64_t f64[] = { 0x55be12f1020d, 0x55be12f10261, 0x7f3a1a0ff8c7, 0x401000 };
	uint64_t f32[HS_MAX_DEPTH];
	struct hs_am *am = hs_am__new(NULL);
	void *user[6];

	(void)state;
	assert_non_null(am);
	expect_same(am, 1, "exit");	/* empty */
	for (uint32_t i = 0; i < HS_MAX_DEPTH; i++)
		f32[i] = 0x08000100u + 0x40u * (i % 7) + 2 * i;	/* a Cortex-M's */
	user[0] = place(am, 40, f64, 4, 0);
	user[1] = place(am, 0, NULL, 0, 0);
	user[2] = place(am, 123456789012ULL, f32, HS_MAX_DEPTH, HS_AM_CUT_DEPTH);
	user[3] = place(am, 16, f32, 3, HS_AM_CUT_UNREADABLE);
	user[4] = place(am, 1, f32 + 3, 7, HS_AM_CUT_DEPTH | HS_AM_CUT_UNREADABLE);
	user[5] = place(am, 4096, f64, 1, 0);
	expect_same(am, 1, "interval");
	expect_same(am, 4242, "a-reason-longer-than-records-keep");
	expect_same(am, -1, "usr1");
	for (int i = 0; i < 6; i++)
		free(hs_am__remove(am, user[i]));
	expect_same(am, 1, "exit");
	hs_am__free(am);
}

static void test_sampled(void **state)
{
	static const uint64_t f[] = { 0x2000, 0x2100 };
	struct hs_am *am = hs_am__new(NULL);
	void *user;

	(void)state;
	assert_non_null(am);
	hs_am__set_sample_bytes(am, 65536);
	user = place(am, 100, f, 2, 0);
	expect_same(am, 7, "signal");
	free(hs_am__remove(am, user));
	hs_am__free(am);
}

static void test_errors(void **state)
{
	static const uint64_t f[] = { 0x2000 };
	struct hs_am *am = hs_am__new(NULL);
	struct sink *s = calloc(1, sizeof(*s));
	uint64_t live, bytes;
	void *user[2];

	(void)state;
	assert_non_null(am);
	assert_non_null(s);
	user[0] = place(am, 8, f, 1, 0);
	user[1] = place(am, 8, f, 1, 0);
	assert_int_equal(hs_am__dump_lines(am, NULL, NULL, 1, "exit", 0), -EINVAL);
	s->fail_at = 2;	/* the first live line */
	assert_int_equal(hs_am__dump_lines(am, sink_write, s, 1, "exit", 0), -EIO);
	assert_int_equal(s->calls, 2);	/* nothing written after the error */
	hs_am__totals(am, &live, &bytes);	/* the lock was given back */
	assert_int_equal(live, 2);
	for (int i = 0; i < 2; i++)
		free(hs_am__remove(am, user[i]));
	hs_am__free(am);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_lines),
		cmocka_unit_test(test_sampled),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

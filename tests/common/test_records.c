// SPDX-License-Identifier: MIT
/*
 * test_records.c - unit tests of heapsnoop's record lines
 * (user/common/records.c, grammar docs/OUTPUT.md): every type written and
 * parsed back to the same values, behind a log prefix too; the literal
 * lines of docs/OUTPUT.md; malformed lines and lines with no record.
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

#include "records.h"

/* @r written, with @prefix before it, then parsed into @back. */
static char *roundtrip(const char *prefix, const struct record *r, struct record *back)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fputs(prefix, f);
	assert_int_equal(records__write(f, r), 0);
	assert_int_equal(fclose(f), 0);
	assert_true(len > 0 && text[len - 1] == '\n');
	text[len - 1] = '\0';
	assert_int_equal(records__parse(text, back), 0);
	assert_int_equal(back->type, r->type);
	return text;	/* back's strings point into it */
}

static void assert_str_n_equal(const char *got, size_t n, const char *want)
{
	assert_int_equal(n, strlen(want));
	assert_memory_equal(got, want, n);
}

static void check_all(const char *prefix)
{
	struct record back;
	struct record dump = { .type = REC_DUMP, .reason = "interval", .time_s = 1763800000,
			       .time_ms = 7, .live = 12, .bytes = UINT64_MAX, .stacks = 4 };
	struct record map = { .type = REC_MAP, .pid = 4449, .start = 0x55be12f0f000,
			      .end = 0x55be12f10000, .off = 0, .build_id = "0123abcd",
			      .path = "/opt/my app/lib name.so (deleted)" };
	struct record map_vdso = { .type = REC_MAP, .pid = 1, .start = 0x7fff0000,
				   .end = 0x7fff2000, .off = 0x1000, .build_id = "-",
				   .path = "[vdso]" };
	struct record live = { .type = REC_LIVE, .pid = 2147483647, .ptr = 0xffffffffffffffff,
			       .token = "~m#IF0BmUQugNCkgCnkhdAYpQa6wAAV", .token_len = 31 };
	struct record unenc = { .type = REC_LIVE, .pid = 3, .ptr = 0x10,
				.size = 1ULL << 63, .error = "value out of range" };
	/* An incomplete stack: each reason alone and both, token or not. */
	struct record cut[] = {
		{ .type = REC_LIVE, .pid = 5, .ptr = 0x20, .cut = REC_CUT_DEPTH,
		  .token = "~m#IF0BmUQugNCkgCnkhdAYpQa6wAAV", .token_len = 31 },
		{ .type = REC_LIVE, .pid = 5, .ptr = 0x20, .cut = REC_CUT_UNREADABLE,
		  .token = "~m#IF0BmUQugNCkgCnkhdAYpQa6wAAV", .token_len = 31 },
		{ .type = REC_LIVE, .pid = 5, .ptr = 0x20, .cut = REC_CUT_ALL,
		  .size = 1ULL << 63, .error = "value out of range" },
	};
	struct record end = { .type = REC_END_DUMP, .live = 12 };
	struct record ex = { .type = REC_EXIT, .pid = 77, .time_s = 5, .time_ms = 999,
			     .live = 7, .bytes = 2100, .comm = "my prog" };
	struct record endex = { .type = REC_END_EXIT, .pid = 77, .live = 7 };
	struct record proc = { .type = REC_PROC, .pid = 77, .peak = UINT64_MAX, .peak_count = 3,
			       .peak_time_s = 1763800001, .peak_time_ms = 5, .allocs = 1,
			       .allocated = 2, .frees = 4, .temporary = 8, .live = 16,
			       .bytes = 32, .comm = "my prog" };
	struct record stack = { .type = REC_STACK, .pid = 77, .allocs = 9, .allocated = 10,
				.frees = 11, .temporary = 12, .live = 13, .bytes = 14,
				.peak = 15, .peak_count = 16,
				.token = "~m#IF0BmUQugNCkgCnkhdAYpQa6wAAV", .token_len = 31 };
	struct record sample = { .type = REC_SAMPLE, .pid = 78, .time_s = 6, .time_ms = 100,
				 .live = 2, .bytes = 64 };
	char *t;

	t = roundtrip(prefix, &dump, &back);
	assert_string_equal(back.reason, "interval");
	assert_int_equal(back.time_s, dump.time_s);
	assert_int_equal(back.time_ms, dump.time_ms);
	assert_int_equal(back.live, dump.live);
	assert_true(back.bytes == dump.bytes);
	assert_int_equal(back.stacks, dump.stacks);
	assert_true(back.sample_bytes == 0);
	free(t);
	/* A sampled live set says its mean; any mean round-trips. */
	for (int i = 0; i < 3; i++) {
		const uint64_t means[] = { 1, 524288, UINT64_MAX };

		dump.sample_bytes = means[i];
		t = roundtrip(prefix, &dump, &back);
		assert_true(back.sample_bytes == means[i]);
		assert_int_equal(back.stacks, dump.stacks);
		free(t);
	}
	dump.sample_bytes = 0;

	for (int i = 0; i < 2; i++) {
		const struct record *m = i ? &map_vdso : &map;

		t = roundtrip(prefix, m, &back);
		assert_int_equal(back.pid, m->pid);
		assert_true(back.start == m->start && back.end == m->end && back.off == m->off);
		assert_string_equal(back.build_id, m->build_id);
		assert_string_equal(back.path, m->path);
		free(t);
	}

	t = roundtrip(prefix, &live, &back);
	assert_int_equal(back.pid, live.pid);
	assert_true(back.ptr == live.ptr);
	assert_int_equal(back.cut, 0);
	assert_str_n_equal(back.token, back.token_len, live.token);
	free(t);

	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		t = roundtrip(prefix, &cut[i], &back);
		assert_int_equal(back.cut, cut[i].cut);
		assert_true(back.ptr == cut[i].ptr);
		if (cut[i].token)
			assert_str_n_equal(back.token, back.token_len, cut[i].token);
		else
			assert_true(!back.token && back.size == cut[i].size);
		free(t);
	}

	t = roundtrip(prefix, &unenc, &back);
	assert_null(back.token);
	assert_int_equal(back.pid, unenc.pid);
	assert_true(back.ptr == unenc.ptr && back.size == unenc.size);
	assert_string_equal(back.error, unenc.error);
	free(t);

	t = roundtrip(prefix, &end, &back);
	assert_int_equal(back.live, end.live);
	free(t);

	t = roundtrip(prefix, &ex, &back);
	assert_int_equal(back.pid, ex.pid);
	assert_int_equal(back.time_s, ex.time_s);
	assert_int_equal(back.time_ms, ex.time_ms);
	assert_int_equal(back.live, ex.live);
	assert_int_equal(back.bytes, ex.bytes);
	assert_string_equal(back.comm, ex.comm);
	free(t);

	t = roundtrip(prefix, &endex, &back);
	assert_int_equal(back.pid, endex.pid);
	assert_int_equal(back.live, endex.live);
	free(t);

	t = roundtrip(prefix, &proc, &back);
	assert_int_equal(back.pid, proc.pid);
	assert_true(back.peak == proc.peak);
	assert_int_equal(back.peak_count, proc.peak_count);
	assert_int_equal(back.peak_time_s, proc.peak_time_s);
	assert_int_equal(back.peak_time_ms, proc.peak_time_ms);
	assert_int_equal(back.allocs, proc.allocs);
	assert_int_equal(back.allocated, proc.allocated);
	assert_int_equal(back.frees, proc.frees);
	assert_int_equal(back.temporary, proc.temporary);
	assert_int_equal(back.live, proc.live);
	assert_int_equal(back.bytes, proc.bytes);
	assert_string_equal(back.comm, proc.comm);
	free(t);

	t = roundtrip(prefix, &stack, &back);
	assert_int_equal(back.pid, stack.pid);
	assert_int_equal(back.allocs, stack.allocs);
	assert_int_equal(back.allocated, stack.allocated);
	assert_int_equal(back.frees, stack.frees);
	assert_int_equal(back.temporary, stack.temporary);
	assert_int_equal(back.live, stack.live);
	assert_int_equal(back.bytes, stack.bytes);
	assert_int_equal(back.peak, stack.peak);
	assert_int_equal(back.peak_count, stack.peak_count);
	assert_str_n_equal(back.token, back.token_len, stack.token);
	free(t);

	t = roundtrip(prefix, &sample, &back);
	assert_int_equal(back.pid, sample.pid);
	assert_int_equal(back.time_s, sample.time_s);
	assert_int_equal(back.time_ms, sample.time_ms);
	assert_int_equal(back.live, sample.live);
	assert_int_equal(back.bytes, sample.bytes);
	free(t);
}

static void test_roundtrip(void **state)
{
	(void)state;
	check_all("");
}

/* heapdecode finds records anywhere in a line of any log. */
static void test_roundtrip_in_log(void **state)
{
	(void)state;
	check_all("2026-11-21T10:00:01 host app[12]: ");
}

/* The lines as docs/OUTPUT.md and heapsnoop write them, byte for byte. */
static void test_written_form(void **state)
{
	struct record live = { .type = REC_LIVE, .pid = 9, .ptr = 0x5000,
			       .token = "~m#AAA", .token_len = 6 };
	struct record map = { .type = REC_MAP, .pid = 9, .start = 0x1000, .end = 0x2000,
			      .off = 0, .build_id = "-", .path = "/bin/x" };
	struct record dump = { .type = REC_DUMP, .reason = "exit", .time_s = 1, .time_ms = 42,
			       .live = 1, .bytes = 10, .stacks = 1 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(records__write(f, &dump), 0);
	dump.sample_bytes = 524288;
	assert_int_equal(records__write(f, &dump), 0);
	assert_int_equal(records__write(f, &map), 0);
	assert_int_equal(records__write(f, &live), 0);
	live.cut = REC_CUT_UNREADABLE;
	assert_int_equal(records__write(f, &live), 0);
	live.cut = REC_CUT_ALL;
	assert_int_equal(records__write(f, &live), 0);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_PROC, .pid = 9,
		.peak = 30, .peak_count = 2, .peak_time_s = 1, .peak_time_ms = 7, .allocs = 3,
		.allocated = 40, .frees = 2, .temporary = 1, .live = 1, .bytes = 10,
		.comm = "x" }), 0);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_STACK, .pid = 9,
		.allocs = 3, .allocated = 40, .frees = 2, .temporary = 1, .live = 1, .bytes = 10,
		.peak = 30, .peak_count = 2, .token = "~m#AAA", .token_len = 6 }), 0);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_END_DUMP, .live = 1 }), 0);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_SAMPLE, .pid = 9,
		.time_s = 2, .time_ms = 100, .live = 1, .bytes = 10 }), 0);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_NONE }), -EINVAL);
	fclose(f);
	assert_string_equal(text,
		"heapsnoop: dump reason=exit time=1.042 live=1 bytes=10 stacks=1\n"
		"heapsnoop: dump reason=exit time=1.042 live=1 bytes=10 stacks=1 "
		"sample-bytes=524288\n"
		"heapsnoop: map pid=9 start=0x1000 end=0x2000 off=0 buildid=- path=/bin/x\n"
		"heapsnoop: live pid=9 ptr=0x5000 ~m#AAA\n"
		"heapsnoop: live pid=9 ptr=0x5000 cut=unreadable ~m#AAA\n"
		"heapsnoop: live pid=9 ptr=0x5000 cut=depth,unreadable ~m#AAA\n"
		"heapsnoop: proc pid=9 peak=30 peak_count=2 peak_time=1.007 allocs=3 allocated=40 "
		"frees=2 temporary=1 live=1 bytes=10 comm=x\n"
		"heapsnoop: stack pid=9 allocs=3 allocated=40 frees=2 temporary=1 live=1 bytes=10 "
		"peak=30 peak_count=2 ~m#AAA\n"
		"heapsnoop: end-dump live=1\n"
		"heapsnoop: sample pid=9 time=2.100 live=1 bytes=10\n");
	free(text);
}

static void test_malformed(void **state)
{
	static const struct { const char *line; enum record_type type; } bad[] = {
		{ "heapsnoop: map pid=1 start=0x2000 end=0x1000 off=0 buildid=- path=/x",
		  REC_MAP },	/* end before start */
		{ "heapsnoop: map pid=1 start=0x1000", REC_MAP },
		{ "heapsnoop: live pid=1 ptr=0x10 garbage", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 cut=maybe ~m#AAA", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 cut=depth,depth ~m#AAA", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 cut=depth,", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 cut=~m#AAA", REC_LIVE },
		{ "heapsnoop: dump reason=exit", REC_DUMP },
		{ "heapsnoop: dump reason=exit time=1.000 live=1 bytes=1 stacks=1 sample-bytes=0",
		  REC_DUMP },	/* a mean of 0 is no sampling: never written */
		{ "heapsnoop: dump reason=exit time=1.000 live=1 bytes=1 stacks=1 sample-bytes=-5",
		  REC_DUMP },
		{ "heapsnoop: dump reason=exit time=1.000 live=1 bytes=1 stacks=1 sample-bytes=",
		  REC_DUMP },
		{ "heapsnoop: exit pid=x", REC_EXIT },
		{ "heapsnoop: end-exit live=1", REC_END_EXIT },
		{ "heapsnoop: end-dump live=x", REC_END_DUMP },
		{ "heapsnoop: proc pid=1 peak=1 peak_count=1 peak_time=1.000 allocs=1", REC_PROC },
		{ "heapsnoop: stack pid=1 allocs=1 allocated=1 frees=0 temporary=0 live=1 bytes=1 "
		  "peak=1 peak_count=1 nottoken", REC_STACK },
		{ "heapsnoop: sample pid=1 time=1.5000 live=1 bytes=1", REC_SAMPLE },
	};
	struct record r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(records__parse(bad[i].line, &r), -EINVAL);
		assert_int_equal(r.type, bad[i].type);
	}
	assert_int_equal(records__parse("heapsnoop: summary: 12 live allocations", &r), -ENOENT);
	assert_int_equal(r.type, REC_NONE);
	assert_int_equal(records__parse("plain ~m#IF0BmUQ pid=3", &r), -ENOENT);
	assert_int_equal(records__parse("", &r), -ENOENT);
	/* The first record keyword of a line is the record. */
	assert_int_equal(records__parse("x heapsnoop: nothing heapsnoop: end-dump live=3", &r), 0);
	assert_int_equal(r.type, REC_END_DUMP);
	assert_int_equal(r.live, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_roundtrip_in_log),
		cmocka_unit_test(test_written_form),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

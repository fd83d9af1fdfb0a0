// SPDX-License-Identifier: MIT
/*
 * test_records.c - unit tests of heapsnoop's record lines
 * (user/common/records/, grammar docs/OUTPUT.md): every type written and
 * parsed back to the same values, behind a log prefix too; the literal
 * lines of docs/OUTPUT.md; malformed lines and lines with no record;
 * stacks of any depth in tokens and back, continuations that do not
 * decode; `frame` and `jit` records' texts, escaped and back; `ustack`
 * records' stack bytes, coded and back, and hostile ones refused.
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
	live.cut = REC_CUT_DEPTH | REC_CUT_UNREADABLE;
	assert_int_equal(records__write(f, &live), 0);
	live.cut = REC_CUT_ORDER;
	assert_int_equal(records__write(f, &live), 0);
	live.cut = 0;
	live.depth = 40;
	live.token = "~m#AAA ~m#BBB";
	live.token_len = 13;
	assert_int_equal(records__write(f, &live), 0);
	/* The continuation kept apart (the collector's). */
	live.depth = 100;
	live.tail = " ~m#CCC ~m#DD";
	live.tail_len = 13;
	assert_int_equal(records__write(f, &live), 0);
	live.tail = NULL;
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
		"heapsnoop: live pid=9 ptr=0x5000 cut=order ~m#AAA\n"
		"heapsnoop: live pid=9 ptr=0x5000 depth=40 ~m#AAA ~m#BBB\n"
		"heapsnoop: live pid=9 ptr=0x5000 depth=100 ~m#AAA ~m#BBB ~m#CCC ~m#DD\n"
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
		/* More than one token: exactly as many as depth= says. */
		{ "heapsnoop: live pid=1 ptr=0x10 ~m#AAA ~m#BBB", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=40 ~m#AAA", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=40 ~m#AAA ~m#B ~m#C", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=31 ~m#AAA", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=16385 ~m#A ~m#B", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=-40 ~m#A ~m#B", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=40 size=9 unencodable: x", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=40  ~m#A ~m#B", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 depth=40 cut=depth ~m#A ~m#B", REC_LIVE },
		{ "heapsnoop: stack pid=1 allocs=1 allocated=1 frees=0 temporary=0 live=1 bytes=1 "
		  "peak=1 peak_count=1 depth=62 ~m#A ~m#B ~m#C", REC_STACK },
		/* frame: a synthetic address, a kind, texts escaped. */
		{ "heapsnoop: frame pid=1 addr=0x7fff0000 kind=python line=1 file=a function=f",
		  REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x8000000000000000 kind=python line=1 file=a "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=Python line=1 file=a "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=-1 file=a "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=jit line=1 file=a "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=4294967296 "
		  "file=a function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=1 file=a%00b "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=1 file=a%4 "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=1 file=a%zz "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=1 file= "
		  "function=f", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=1 file=a "
		  "function=\xc3\xa9", REC_FRAME },
		{ "heapsnoop: frame pid=1 addr=0x4000000000000000 kind=python line=1 file=a",
		  REC_FRAME },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x2000 name=f", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x4000000000000001 name=x", REC_JIT },
		/* jit's line: code= at most start, line= with file=, in that order. */
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x code=0x2001", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x code=0xzz", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x line=4", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x line= file=a", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x line=4 file=", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x line=4 file=a%00", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x line=-4 file=a", REC_JIT },
		{ "heapsnoop: jit pid=1 start=0x2000 end=0x3000 name=x code=0x1000x", REC_JIT },
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

/* The frames of a stack @depth deep, each its own, some far apart (deltas and literals). */
static void deep_frames(uint64_t *f, uint32_t depth)
{
	for (uint32_t i = 0; i < depth; i++)
		f[i] = i % 7 == 3 ? 0x7f3a1a0ff8c7 + i * 0x40 : 0x55d0c3a4b123 + i * 0x1234;
}

/* Stacks of any depth: tokens written, parsed back, frames the same. */
static void test_deep_stacks(void **state)
{
	static const uint32_t depths[] = { 0, 1, 31, 32, 61, 62, 63, 100, REC_MAX_DEPTH };
	static uint64_t frames[REC_MAX_DEPTH], back[REC_MAX_DEPTH];
	static char tok[REC_TOKENS_BUF];

	(void)state;
	deep_frames(frames, REC_MAX_DEPTH);
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		uint32_t d = depths[i], got;
		int n = records__tokens(frames, d, 4096 + d, tok, sizeof(tok));
		struct record r = { .type = i % 2 ? REC_STACK : REC_LIVE, .pid = 3, .ptr = 0x10,
				    .token = tok, .depth = d > HS_MAX_DEPTH ? d : 0 }, p;
		uint64_t size;
		char *t;

		assert_true(n > 0);
		r.token_len = (size_t)n;
		t = roundtrip("x ", &r, &p);
		assert_int_equal(p.depth, r.depth);
		assert_int_equal(p.ntokens, d ? (d + 30) / 31 : 1);
		assert_str_n_equal(p.token, p.token_len, tok);
		assert_int_equal(records__stack(&p, &size, back, &got), 0);
		assert_int_equal(got, d);
		assert_true(size == 4096 + d);
		assert_memory_equal(back, frames, d * sizeof(*frames));
		free(t);
	}
	/* The first token is the lws record: size and the innermost 31 frames. */
	{
		struct hs_record rec;
		int n = records__tokens(frames, 40, 77, tok, sizeof(tok));

		assert_true(n > 0 && strchr(tok, ' '));
		assert_int_equal(hs_token_decode(tok + 3, (size_t)(strchr(tok, ' ') - tok - 3),
						 &rec), 0);
		assert_int_equal(rec.depth, 31);
		assert_true(rec.size == 77);
		assert_int_equal(hs_token_decode(strchr(tok, ' ') + 4,
						 strlen(strchr(tok, ' ') + 4), &rec), 0);
		assert_int_equal(rec.depth, 9);
		assert_true(rec.size == 0);
		assert_true(rec.frames[0] == frames[31]);
	}
	assert_int_equal(records__tokens(frames, REC_MAX_DEPTH + 1, 1, tok, sizeof(tok)),
			 -HS_EDEPTH);
	assert_int_equal(records__tokens(frames, 100, 1, tok, 500), -HS_ENOSPC);
	frames[40] = 1ULL << 63;
	assert_int_equal(records__tokens(frames, 100, 1, tok, sizeof(tok)), -HS_ERANGE);
}

/* What the writer refuses: tokens that are not depth='s, whole or not at all. */
static void test_write_refused(void **state)
{
	static const struct record bad[] = {
		{ .type = REC_LIVE, .pid = 1, .token = "~m#A ~m#B", .token_len = 9 },
		{ .type = REC_LIVE, .pid = 1, .depth = 40, .token = "~m#A", .token_len = 4 },
		{ .type = REC_LIVE, .pid = 1, .depth = 20, .token = "~m#A", .token_len = 4 },
		{ .type = REC_LIVE, .pid = 1, .depth = 40, .size = 1, .error = "x" },
		{ .type = REC_STACK, .pid = 1 },
		{ .type = REC_STACK, .pid = 1, .token = "garbage", .token_len = 7 },
		{ .type = REC_FRAME, .pid = 1, .addr = 0x1000, .kind = "python" },
		{ .type = REC_FRAME, .pid = 1, .addr = REC_FRAME_BASE, .kind = "" },
		{ .type = REC_FRAME, .pid = 1, .addr = REC_FRAME_BASE, .kind = "Py" },
		{ .type = REC_FRAME, .pid = 1, .addr = REC_FRAME_BASE, .kind = "1lua" },
		{ .type = REC_FRAME, .pid = 1, .addr = REC_FRAME_BASE, .kind = "jit" },
		{ .type = REC_JIT, .pid = 1, .start = 0x2000, .end = 0x1000 },
		{ .type = REC_JIT, .pid = 1, .start = REC_FRAME_BASE, .end = REC_FRAME_BASE + 1,
		  .function = "x" },
		{ .type = REC_LIVE, .pid = 1, .depth = 40, .token = "~m#A", .token_len = 4,
		  .tail = "~m#B", .tail_len = 4 },
		{ .type = REC_LIVE, .pid = 1, .depth = 40, .token = "~m#A", .token_len = 4,
		  .tail = " ~m#B ~m#C", .tail_len = 10 },
		{ .type = REC_LIVE, .pid = 1, .size = 1, .error = "x", .tail = " ~m#B",
		  .tail_len = 5 },
	};
	static char long_name[REC_FILE_MAX + 2];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct record r = { .type = REC_FRAME, .pid = 1, .addr = REC_FRAME_BASE,
			    .kind = "python", .function = long_name };

	(void)state;
	assert_non_null(f);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(records__write(f, &bad[i]), -EINVAL);
	memset(long_name, 'a', REC_NAME_MAX + 1);
	assert_int_equal(records__write(f, &r), -EINVAL);
	r.function = "f";
	r.file = long_name;
	memset(long_name, 'a', REC_FILE_MAX + 1);
	assert_int_equal(records__write(f, &r), -EINVAL);
	r = (struct record){ .type = REC_JIT, .pid = 1, .start = 1, .end = 2,
			     .function = long_name };
	assert_int_equal(records__write(f, &r), -EINVAL);
	fclose(f);
	assert_int_equal(len, 0);	/* not a byte of any */
	free(text);
}

/* @r with one token of its run replaced by @with (the run's @k-th). */
static void replace_token(char *run, unsigned int k, const char *with, char *out, size_t cap)
{
	char *p = run, *e;

	for (unsigned int i = 0; i < k; i++)
		p = strchr(p, ' ') + 1;
	e = strchr(p, ' ');
	snprintf(out, cap, "heapsnoop: live pid=1 ptr=0x10 depth=70 %.*s%s%s", (int)(p - run), run,
		 with, e ? e : "");
}

/* A continuation that does not decode: what came before it kept, said. */
static void test_broken_continuation(void **state)
{
	static uint64_t frames[REC_MAX_DEPTH], back[REC_MAX_DEPTH];
	static char tok[REC_TOKENS_BUF], line[REC_TOKENS_BUF + 100], one[HS_TOKEN_BUF];
	struct hs_record rec = { .size = 5, .depth = 31 };
	struct record r;
	uint64_t size;
	uint32_t got;

	(void)state;
	deep_frames(frames, 70);
	assert_true(records__tokens(frames, 70, 1000, tok, sizeof(tok)) > 0);
	/* Token 2 of 3 with a bad character: the first 31 frames kept. */
	replace_token(tok, 1, "~m#A*A", line, sizeof(line));
	assert_int_equal(records__parse(line, &r), 0);
	assert_int_equal(r.ntokens, 3);
	assert_int_equal(records__stack(&r, &size, back, &got), HS_EBASE64);
	assert_int_equal(got, 31);
	assert_true(size == 1000);
	assert_memory_equal(back, frames, 31 * sizeof(*frames));
	/* A continuation with a size: not one. */
	memcpy(rec.frames, frames + 31, 31 * sizeof(*frames));
	assert_true(hs_token_encode(&rec, one, sizeof(one)) > 0);
	replace_token(tok, 1, one, line, sizeof(line));
	assert_int_equal(records__parse(line, &r), 0);
	assert_int_equal(records__stack(&r, &size, back, &got), HS_ECONT);
	assert_int_equal(got, 31);
	/* A short token before the last: frames would be out of place. */
	rec.size = 0;
	rec.depth = 30;
	assert_true(hs_token_encode(&rec, one, sizeof(one)) > 0);
	replace_token(tok, 1, one, line, sizeof(line));
	assert_int_equal(records__parse(line, &r), 0);
	assert_int_equal(records__stack(&r, &size, back, &got), HS_ECONT);
	assert_int_equal(got, 61);
	/* Frames that do not add up to depth=: the last token short of it. */
	snprintf(line, sizeof(line), "heapsnoop: live pid=1 ptr=0x10 depth=75 %s", tok);
	assert_int_equal(records__parse(line, &r), 0);
	assert_int_equal(records__stack(&r, &size, back, &got), HS_EDEPTHSUM);
	assert_int_equal(got, 70);
	/* The first token broken: nothing. */
	replace_token(tok, 0, "~m#A*A", line, sizeof(line));
	assert_int_equal(records__parse(line, &r), 0);
	assert_int_equal(records__stack(&r, &size, back, &got), -HS_EBASE64);
	assert_int_equal(got, 0);
}

/* `frame` and `jit` records: any bytes of a text but NUL, back exactly. */
static void test_frame_records(void **state)
{
	static char long_file[REC_FILE_MAX + 1], long_name[REC_NAME_MAX + 1], raw[256];
	static const char *const texts[] = {
		"", "-", "--", "%", "%2D", "a b", "K.__init__", "<module>",
		"function 'mod.leaf'", "make.<locals>.<listcomp>", "caf\xc3\xa9.py",
		"line\nbreak\r\ttab", "\x1b[31mred", "\xff\xfe", long_file, long_name, raw,
	};
	char *text = NULL, buf[REC_FILE_MAX + 1];
	size_t len = 0;
	struct record back;

	(void)state;
	memset(long_file, '/', REC_FILE_MAX);
	memset(long_name, '%', REC_NAME_MAX);
	for (int c = 1; c < 256; c++)
		raw[c - 1] = (char)c;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const char *fn = texts[i] == long_file ? "f" : texts[i];
		struct record r = { .type = REC_FRAME, .pid = 4, .addr = REC_FRAME_BASE + i * 3,
				    .kind = "python", .line = (uint32_t)i * 1000, .file = texts[i],
				    .function = fn };
		struct record j = { .type = REC_JIT, .pid = 4, .start = 0x7f0000001000,
				    .end = 0x7f0000001400, .function = fn };
		char *t = roundtrip("pfx ", &r, &back);

		assert_true(back.addr == r.addr);
		assert_string_equal(back.kind, "python");
		assert_int_equal(back.line, r.line);
		assert_int_equal(records__text(&back.file_esc, buf, sizeof(buf)),
				 (int)strlen(texts[i]));
		assert_string_equal(buf, texts[i]);
		assert_int_equal(records__text(&back.function_esc, buf, sizeof(buf)),
				 (int)strlen(fn));
		assert_string_equal(buf, fn);
		/* No blank or byte outside printable ASCII reaches the line. */
		for (const char *c = strstr(t, "file="); *c; c++)
			assert_true(*c == ' ' || (*c > 0x20 && *c < 0x7f));
		free(t);
		t = roundtrip("", &j, &back);
		assert_true(back.start == j.start && back.end == j.end);
		assert_int_equal(records__text(&back.function_esc, buf, sizeof(buf)),
				 (int)strlen(fn));
		assert_string_equal(buf, fn);
		free(t);
	}
	/* None is "-", "-" itself "%2D"; the written form. */
	{
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		assert_int_equal(records__write(f, &(struct record){ .type = REC_FRAME, .pid = 7,
			.addr = REC_FRAME_BASE + 5, .kind = "lua", .line = 12, .file = NULL,
			.function = "function 'mod.leaf'" }), 0);
		assert_int_equal(records__write(f, &(struct record){ .type = REC_FRAME, .pid = 7,
			.addr = REC_FRAME_BASE + 6, .kind = "python", .line = 0, .file = "-",
			.function = "100%\n" }), 0);
		assert_int_equal(records__write(f, &(struct record){ .type = REC_JIT, .pid = 7,
			.start = 0x1000, .end = 0x1040, .function = "JS:*leaf /x/alloc.js:5:14" }), 0);
		fclose(f);
		assert_string_equal(text,
			"heapsnoop: frame pid=7 addr=0x4000000000000005 kind=lua line=12 file=- "
			"function=function%20'mod.leaf'\n"
			"heapsnoop: frame pid=7 addr=0x4000000000000006 kind=python line=0 file=%2D "
			"function=100%25%0A\n"
			"heapsnoop: jit pid=7 start=0x1000 end=0x1040 name=JS:*leaf%20/x/alloc.js:5:14\n");
		free(text);
	}
	/* A jit record's line (a jitdump's debug info) and code start: written, back. */
	{
		struct record j = { .type = REC_JIT, .pid = 9, .start = 0x7f0000001040,
				    .end = 0x7f0000001058, .function = "JS:*leaf /x/a b.js:5:14",
				    .file = "/x/a b.js", .line = 7, .addr = 0x7f0000001000 };
		char *t = roundtrip("", &j, &back);

		assert_string_equal(t, "heapsnoop: jit pid=9 start=0x7f0000001040 "
			"end=0x7f0000001058 name=JS:*leaf%20/x/a%20b.js:5:14 code=0x7f0000001000 "
			"line=7 file=/x/a%20b.js");
		assert_true(back.start == j.start && back.end == j.end && back.addr == j.addr);
		assert_int_equal(back.line, 7);
		assert_int_equal(records__text(&back.file_esc, buf, sizeof(buf)), 9);
		assert_string_equal(buf, "/x/a b.js");
		free(t);
		/* Without a line, or its code starting at start: neither written. */
		j.file = NULL;
		j.line = 0;
		j.addr = j.start;
		t = roundtrip("", &j, &back);
		assert_null(strstr(t, "code="));
		assert_null(strstr(t, "line="));
		assert_true(back.addr == 0 && back.line == 0);
		assert_int_equal(records__text(&back.file_esc, buf, sizeof(buf)), 0);
		free(t);
		/* A code start past the range's start: refused. */
		j.addr = j.start + 1;
		assert_int_equal(records__write(stdout, &j), -EINVAL);
		/* A field a later writer adds after them: read past, as an older
		 * reader reads past code= and line= after the name. */
		assert_int_equal(records__parse("heapsnoop: jit pid=1 start=0x10 end=0x20 name=n "
						"code=0x8 line=3 file=f later=1", &back), 0);
		assert_true(back.addr == 8 && back.line == 3);
	}
	/* A text decoded into too small a buffer: refused. */
	assert_int_equal(records__parse("heapsnoop: jit pid=1 start=0x1 end=0x2 name=abc", &back),
			 0);
	assert_int_equal(records__text(&back.function_esc, buf, 3), -ENOSPC);
	assert_int_equal(records__text(&back.function_esc, buf, 4), 3);
	/* Lower-case escapes and a CRLF line end are read too. */
	assert_int_equal(records__parse("heapsnoop: jit pid=1 start=0x1 end=0x2 name=a%2db\r",
					&back), 0);
	assert_int_equal(records__text(&back.function_esc, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "a-b");
	/* A line as fgets() reads it, its newline kept (tests/collector/check_death.c). */
	assert_int_equal(records__parse("heapsnoop: frame pid=1 addr=0x6000000000000000 kind=thread "
					"line=0 file=- function=[created%20by]\n", &back), 0);
	assert_int_equal(records__text(&back.function_esc, buf, sizeof(buf)), 12);
	assert_string_equal(buf, "[created by]");
}

/*
 * The tree form: a `tree`, its `node` records of one frame to the
 * deepest, any 64-bit frame; `live` and `stack` records by node= (a size
 * past 2^63 too, which no token holds; node=^, the node just before),
 * cut= or not; written as
 * docs/OUTPUT.md shows them, parsed back the same; and what does not
 * fit the grammar refused whole.
 */
static void test_tree_records(void **state)
{
	static uint64_t frames[REC_MAX_DEPTH], back[REC_MAX_DEPTH];
	static const uint32_t counts[] = { 1, 2, 31, 100, REC_NODE_MAX_FRAMES };
	struct record tree = { .type = REC_TREE, .pid = 7, .nodes = UINT32_MAX }, p;
	struct record live = { .type = REC_LIVE, .pid = 7, .ptr = 0x55d0c3a52a40,
			       .has_node = true, .node = 123, .size = UINT64_MAX };
	struct record stack = { .type = REC_STACK, .pid = 7, .allocs = 1, .allocated = 2,
				.frees = 3, .temporary = 4, .live = 5, .bytes = 6, .peak = 7,
				.peak_count = 8, .cut = REC_CUT_DEPTH | REC_CUT_ORDER,
				.has_node = true, .node = UINT32_MAX - 1 };
	char *t, *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	t = roundtrip("log: ", &tree, &p);
	assert_int_equal(p.pid, 7);
	assert_int_equal(p.nodes, UINT32_MAX);
	free(t);
	deep_frames(frames, REC_MAX_DEPTH);
	frames[0] = 0;
	frames[1] = UINT64_MAX;
	frames[2] = 1ULL << 63;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		struct record node = { .type = REC_NODE, .pid = 7, .level = (uint32_t)i * 255,
				       .frames = frames, .nframes = counts[i] };

		t = roundtrip("", &node, &p);
		assert_int_equal(p.level, node.level);
		assert_int_equal(p.nframes, counts[i]);
		assert_int_equal(records__frames(&p, back, REC_MAX_DEPTH), (int)counts[i]);
		assert_memory_equal(back, frames, counts[i] * sizeof(*back));
		assert_int_equal(records__frames(&p, back, counts[i] - 1), -ENOSPC);
		free(t);
	}
	for (int cut = 0; cut < 2; cut++) {
		live.cut = cut ? REC_CUT_UNREADABLE : 0;
		t = roundtrip("", &live, &p);
		assert_true(p.has_node && !p.token && p.node == 123 && p.size == UINT64_MAX);
		assert_true(p.ptr == live.ptr && p.cut == live.cut);
		free(t);
	}
	t = roundtrip("", &stack, &p);
	assert_true(p.has_node && !p.token && p.node == UINT32_MAX - 1 && p.cut == stack.cut);
	free(t);
	stack.node = REC_NODE_PREV;
	t = roundtrip("", &stack, &p);
	assert_true(p.has_node && p.node == REC_NODE_PREV);
	assert_true(p.allocs == 1 && p.allocated == 2 && p.peak_count == 8);
	free(t);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	tree.nodes = 3;
	assert_int_equal(records__write(f, &tree), 0);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_NODE, .pid = 7,
		.level = 0, .frames = (const uint64_t[]){ 0x401131, 0x7f0a1c02a305 },
		.nframes = 2 }), 0);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_NODE, .pid = 7,
		.level = 1, .frames = (const uint64_t[]){ 0x4013a5 }, .nframes = 1 }), 0);
	live.cut = 0;
	live.size = 40;
	live.node = 1;
	assert_int_equal(records__write(f, &live), 0);
	stack.cut = 0;
	stack.node = 1;
	assert_int_equal(records__write(f, &stack), 0);
	live.node = REC_NODE_PREV;
	assert_int_equal(records__write(f, &live), 0);
	live.node = 1;
	/* Refused whole: nothing written. */
	assert_int_equal(records__write(f, &(struct record){ .type = REC_NODE, .pid = 7,
		.frames = frames, .nframes = 0 }), -EINVAL);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_NODE, .pid = 7,
		.frames = frames, .nframes = REC_MAX_DEPTH + 1 }), -EINVAL);
	assert_int_equal(records__write(f, &(struct record){ .type = REC_NODE, .pid = 7,
		.level = REC_MAX_DEPTH, .frames = frames, .nframes = 1 }), -EINVAL);
	live.token = "~m#AAA";
	live.token_len = 6;
	assert_int_equal(records__write(f, &live), -EINVAL);	/* both forms */
	fclose(f);
	assert_string_equal(text,
		"heapsnoop: tree pid=7 nodes=3\n"
		"heapsnoop: node pid=7 level=0 frames=0x401131,0x7f0a1c02a305\n"
		"heapsnoop: node pid=7 level=1 frames=0x4013a5\n"
		"heapsnoop: live pid=7 ptr=0x55d0c3a52a40 size=40 node=1\n"
		"heapsnoop: stack pid=7 allocs=1 allocated=2 frees=3 temporary=4 live=5 bytes=6 "
		"peak=7 peak_count=8 node=1\n"
		"heapsnoop: live pid=7 ptr=0x55d0c3a52a40 size=40 node=^\n");
	free(text);
}

static void test_tree_malformed(void **state)
{
	static const struct { const char *line; enum record_type type; } bad[] = {
		{ "heapsnoop: tree pid=7", REC_TREE },
		{ "heapsnoop: tree pid=7 nodes=4294967296", REC_TREE },
		{ "heapsnoop: tree pid=-7 nodes=1", REC_TREE },
		{ "heapsnoop: node pid=7 level=0 frames=", REC_NODE },
		{ "heapsnoop: node pid=7 level=0 frames=0x", REC_NODE },
		{ "heapsnoop: node pid=7 level=0 frames=401000", REC_NODE },
		{ "heapsnoop: node pid=7 level=0 frames=0x1,", REC_NODE },
		{ "heapsnoop: node pid=7 level=0 frames=0x1,,0x2", REC_NODE },
		{ "heapsnoop: node pid=7 level=0 frames=0x11112222333344445", REC_NODE },
		{ "heapsnoop: node pid=7 level=0 frames=0x1g", REC_NODE },
		{ "heapsnoop: node pid=7 level=16384 frames=0x1", REC_NODE },
		{ "heapsnoop: node pid=7 level=x frames=0x1", REC_NODE },
		{ "heapsnoop: node pid=7 frames=0x1", REC_NODE },
		{ "heapsnoop: live pid=1 ptr=0x10 size=5 node=", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 size=5 node=4294967296", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 size=18446744073709551616 node=1", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 size=5 node=1x", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 size=5 node=^1", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 size=5 node=4294967295", REC_LIVE },
		{ "heapsnoop: live pid=1 ptr=0x10 node=1", REC_LIVE },
		{ "heapsnoop: stack pid=1 allocs=1 allocated=1 frees=0 temporary=0 live=1 bytes=1 "
		  "peak=1 peak_count=1 size=1 node=1", REC_STACK },
		{ "heapsnoop: stack pid=1 allocs=1 allocated=1 frees=0 temporary=0 live=1 bytes=1 "
		  "peak=1 peak_count=1 node=-1", REC_STACK },
	};
	char list[REC_NODE_MAX_FRAMES * 4 + 64];
	struct record r;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(records__parse(bad[i].line, &r), -EINVAL);
		assert_int_equal(r.type, bad[i].type);
	}
	/* The deepest list, and one frame more. */
	n = (size_t)snprintf(list, sizeof(list), "heapsnoop: node pid=7 level=0 frames=0x1");
	for (int i = 1; i < REC_NODE_MAX_FRAMES; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, ",0x1");
	assert_int_equal(records__parse(list, &r), 0);
	assert_int_equal(r.nframes, REC_NODE_MAX_FRAMES);
	snprintf(list + n, sizeof(list) - n, ",0x1");
	assert_int_equal(records__parse(list, &r), -EINVAL);
	/* A later writer's fields after a blank: read past. */
	assert_int_equal(records__parse("heapsnoop: node pid=7 level=2 frames=0xA,0xb later=1",
					&r), 0);
	assert_int_equal(r.nframes, 2);
	assert_int_equal(records__parse("heapsnoop: live pid=1 ptr=0x10 size=5 node=9 later=1",
					&r), 0);
	assert_true(r.has_node && r.node == 9 && r.size == 5);
}


/* A stack copy of known kinds of words: zeros, small numbers, pointers near the registers, noise. */
static void fake_stack(uint8_t *b, uint32_t size, const uint64_t *regs, unsigned int seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;

	for (uint32_t i = 0; i + 8 <= size; i += 8) {
		uint64_t w;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		switch (x % 6) {
		case 0: w = 0; break;
		case 1: w = x % 300; break;
		case 2: w = regs[1] + i + (x % 64); break;		/* a saved stack pointer */
		case 3: w = regs[0] + (x % 4096) - 2048; break;	/* a return address */
		case 4: w = -(uint64_t)(x % 5); break;
		default: w = x; break;
		}
		memcpy(b + i, &w, 8);
	}
	for (uint32_t i = size / 8 * 8; i < size; i++)
		b[i] = (uint8_t)(x >> (i % 8));
}

static void test_ustack_records(void **state)
{
	static const uint32_t sizes[] = { 0, 8, 13, 64, 4096, 70003, 1 << 20 };
	static uint8_t bytes[1 << 20], back[1 << 20];
	uint64_t regs[8] = { 0x55d0c3a4b123, 0x7ffc1234a8f0, 0x7ffc1234a9a0, 0, 1, UINT64_MAX,
			     1ULL << 63, 0x7f3a1a0ff8c7 };
	struct record p;
	char *t;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct record r = { .type = REC_USTACK, .pid = 7, .ptr = 0x55d0c3a52a40,
				    .us = { .version = REC_USTACK_VERSION, .arch = "x86-64",
					    .frames = 9, .nregs = 8, .size = sizes[i],
					    .want = sizes[i] + 5, .skip = sizes[i] / 2,
					    .holes = 0x5, .bytes = bytes } };
		long coded;

		memcpy(r.us.regs, regs, sizeof(regs));
		fake_stack(bytes, sizes[i], regs, (unsigned int)i);
		t = roundtrip("log: ", &r, &p);
		assert_int_equal(p.pid, 7);
		assert_int_equal(p.ptr, r.ptr);
		assert_int_equal(p.us.version, REC_USTACK_VERSION);
		assert_string_equal(p.us.arch, "x86-64");
		assert_int_equal(p.us.frames, 9);
		assert_int_equal(p.us.nregs, 8);
		assert_memory_equal(p.us.regs, regs, sizeof(regs));
		assert_int_equal(p.us.size, sizes[i]);
		assert_int_equal(p.us.want, sizes[i] + 5);
		assert_int_equal(p.us.skip, sizes[i] / 2);
		assert_int_equal(p.us.holes, 5);
		memset(back, 0xaa, sizeof(back));
		assert_int_equal(records__ustack_bytes(&p, back, sizeof(back)), 0);
		assert_memory_equal(back, bytes, sizes[i]);
		if (sizes[i])
			assert_int_equal(records__ustack_bytes(&p, back, sizes[i] - 1), -ENOSPC);
		/* Coded smaller than the copy: a third of it or less here (docs/OUTPUT.md measures real ones). */
		coded = records__ustack_coded(bytes, sizes[i], regs, 8);
		assert_true(coded >= 0 && (sizes[i] < 64 || coded * 3 < (long)sizes[i] * 2));
		free(t);
	}
}

/* Hostile `ustack` lines: refused as malformed, or their data refused; never read past. */
static void test_ustack_malformed(void **state)
{
	static const char *const bad[] = {
		"heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=x86-64 frames=1 regs=0x1,0x2 size=8 "
		"want=8 skip=0 holes=0x0 data=AQ==",	/* 2 registers, x86-64 has 8 */
		"heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=x86-64 frames=1 "
		"regs=0x1,0x2,0x3,0x4,0x5,0x6,0x7,0x8 size=99999999 want=8 skip=0 holes=0x0 data=",
		"heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=x86-64 frames=1 "
		"regs=0x1,0x2,0x3,0x4,0x5,0x6,0x7,0x8 size=8 want=8 skip=9 holes=0x0 data=",
		"heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=x86-64 frames=1 "
		"regs=0x1,0x2,0x3,0x4,0x5,0x6,0x7,0x8 size=8 want=8 skip=0 holes=0x0 data=AQ== junk",
		"heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=averyverylongarch frames=1 regs=0x1 "
		"size=8 want=8 skip=0 holes=0x0 data=AQ==",
		"heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=x86-64 frames=1 regs= size=8",
		"heapsnoop: ustack pid=1 ptr=0x10",
	};
	/* Parsed, but data= is not a coding of size= bytes. */
	static const char *const bad_data[] = {
		"AQ",		/* one small integer: 8 bytes want one word, but 16 want two */
		"/w==",		/* a varint cut */
		"BA==",		/* a run of one zero word: fine for 8, not 16 */
		"Aw==",		/* a literal whose 8 bytes are not there */
		"QUFBQUFBQUFBQUFBQUFB",	/* runs of 16 words past the end */
		"////////////////////",	/* a varint past 64 bits */
		"AQEB",		/* three words for two: one too many */
		"A!==",		/* not base64 */
	};
	uint8_t out[16];
	struct record r;
	char line[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(records__parse(bad[i], &r), -EINVAL);
	for (size_t i = 0; i < sizeof(bad_data) / sizeof(bad_data[0]); i++) {
		snprintf(line, sizeof(line), "heapsnoop: ustack pid=1 ptr=0x10 v=1 arch=x86-64 "
			 "frames=1 regs=0x1,0x2,0x3,0x4,0x5,0x6,0x7,0x8 size=16 want=16 skip=0 "
			 "holes=0x0 data=%s", bad_data[i]);
		if (records__parse(line, &r) == 0)
			assert_int_equal(records__ustack_bytes(&r, out, sizeof(out)), -EINVAL);
	}
	/* A version not known, an architecture not known: parsed, for the reader to refuse and say. */
	assert_int_equal(records__parse("heapsnoop: ustack pid=1 ptr=0x10 v=2 arch=riscv64 "
					"frames=1 regs=0x1,0x2 size=8 want=8 skip=0 holes=0x0 "
					"data=AQ==", &r), 0);
	assert_int_equal(r.us.version, 2);
	assert_string_equal(r.us.arch, "riscv64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_roundtrip_in_log),
		cmocka_unit_test(test_written_form),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_deep_stacks),
		cmocka_unit_test(test_write_refused),
		cmocka_unit_test(test_broken_continuation),
		cmocka_unit_test(test_frame_records),
		cmocka_unit_test(test_tree_records),
		cmocka_unit_test(test_tree_malformed),
		cmocka_unit_test(test_ustack_records),
		cmocka_unit_test(test_ustack_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_model.c - unit tests of heapdecode's model of a log
 * (user/decode/model/, model.h), fed real record lines: each written by
 * user/common/records/'s writer, as heapsnoop writes them, its `~m#`
 * tokens by the codec, then read as heapdecode reads a log (logread.h).
 * Asserted: the live set's stacks, counts and bytes; the dump described
 * (--dump, --dump all); exit sections; the whole run; a baseline
 * subtracted; a sampled dump's estimates; the join of the live set and
 * the whole run; `map` records and the frames they name.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heapsnoop/codec.h"
#include "input/logread.h"
#include "model/model.h"
#include "records.h"
#include "sampling.h"
#include "stacks.h"

/* Three stacks of pid 10, innermost frame first, and one of pid 11. */
static const uint64_t S1[] = { 0x401010, 0x402020, 0x403030 };
static const uint64_t S2[] = { 0x401110, 0x402020, 0x403030 };
static const uint64_t S3[] = { 0x401210 };
static const uint64_t S4[] = { 0x7f0000001000, 0x7f0000002000 };
#define N(s) ((uint32_t)(sizeof(s) / sizeof((s)[0])))

/* A log being written: its lines in memory. */
struct log {
	char *text;
	size_t len;
	FILE *f;
	int64_t time_s;	/* each dump one second after the last */
};

static void log_open(struct log *l)
{
	*l = (struct log){ .time_s = 1795600000 };
	l->f = open_memstream(&l->text, &l->len);
	assert_non_null(l->f);
}

static void put(struct log *l, const struct record *r)
{
	assert_int_equal(records__write(l->f, r), 0);
}

/* @r with the `~m#` token of @size bytes from @depth @frames, written. */
static void put_token(struct log *l, struct record *r, uint64_t size, const uint64_t *frames,
		      uint32_t depth)
{
	struct hs_record rec = { .size = size, .depth = depth };
	char token[HS_TOKEN_BUF];
	int n;

	memcpy(rec.frames, frames, depth * sizeof(*frames));
	n = hs_token_encode(&rec, token, sizeof(token));
	assert_true(n > 0);
	r->token = token;
	r->token_len = (size_t)n;
	put(l, r);
}

static void dump(struct log *l, uint64_t sample_bytes)
{
	put(l, &(struct record){ .type = REC_DUMP, .reason = "interval", .time_s = ++l->time_s,
				 .time_ms = 250, .sample_bytes = sample_bytes });
}

static void end_dump(struct log *l)
{
	put(l, &(struct record){ .type = REC_END_DUMP });
}

static void live(struct log *l, int pid, uint64_t size, const uint64_t *frames, uint32_t depth,
		 uint32_t cut)
{
	struct record r = { .type = REC_LIVE, .pid = pid, .ptr = 0x1000 + size, .cut = cut };

	put_token(l, &r, size, frames, depth);
}

/* A whole-run `stack` record: @allocs calls of @bytes, @live_bytes live. */
static void stack(struct log *l, int pid, uint64_t allocs, uint64_t bytes, uint64_t live_bytes,
		  const uint64_t *frames, uint32_t depth)
{
	struct record r = { .type = REC_STACK, .pid = pid, .allocs = allocs, .allocated = bytes,
			    .live = live_bytes ? 1 : 0, .bytes = live_bytes, .peak = bytes,
			    .peak_count = allocs };

	put_token(l, &r, 0, frames, depth);
}

static void proc(struct log *l, int pid, uint64_t peak, const char *comm)
{
	put(l, &(struct record){ .type = REC_PROC, .pid = pid, .peak = peak, .peak_count = 3,
				 .peak_time_s = l->time_s, .allocs = 9, .comm = comm });
}

static void map(struct log *l, int pid, uint64_t start, uint64_t end, uint64_t off,
		const char *path)
{
	put(l, &(struct record){ .type = REC_MAP, .pid = pid, .start = start, .end = end,
				 .off = off, .build_id = "-", .path = path });
}

/* Every line of @l, closed, read as heapdecode reads a log and handed to @take. */
static void feed(struct hd_model *m, struct log *l,
		 int (*take)(struct hd_model *m, const struct hd_line *hl))
{
	char *line, *save = NULL;

	assert_int_equal(fclose(l->f), 0);
	for (line = strtok_r(l->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct hd_line hl;

		hd_line__parse(&hl, line);
		assert_int_equal(take(m, &hl), 0);
	}
}

/* Every line of @l into a new model (--dump @dump); the caller frees it. */
static struct hd_model *model_of(struct log *l, unsigned int dump_no,
				 void (*each)(struct hd_model *m, void *ctx), void *ctx)
{
	struct hd_model_opts o = { .dump = dump_no, .each_dump = each, .ctx = ctx };
	struct hd_model *m = hd_model__new(&o, NULL);

	assert_non_null(m);
	feed(m, l, hd_model__take);
	return m;
}

static void log_free(struct log *l)
{
	free(l->text);
}

/* The live set's stacks, checked against @n (pid, bytes, count, flags, frames) rows. */
struct want {
	uint32_t pid;
	int64_t bytes, count;
	uint32_t flags;
	const uint64_t *frames;
	uint32_t depth;
};

static void assert_stack(const struct stack *s, const struct want *w)
{
	assert_int_equal(s->pid, w->pid);
	assert_int_equal((int64_t)s->live_bytes, w->bytes);
	assert_int_equal((int64_t)s->live_count, w->count);
	assert_int_equal(s->flags, w->flags);
	assert_int_equal(s->depth, w->depth);
	assert_memory_equal(s->frames, w->frames, w->depth * sizeof(*w->frames));
}

static void assert_live(struct hd_model *m, const struct want *w, size_t n)
{
	size_t got;
	struct stack **v = hd_model__live_stacks(m, &got);

	assert_non_null(v);
	assert_int_equal(got, n);
	for (size_t i = 0; i < n; i++)
		assert_stack(v[i], &w[i]);
	free(v);
}

static void assert_totals(struct hd_model *m, int64_t bytes, int64_t count)
{
	uint64_t b, c;

	hd_model__totals(m, &b, &c);
	assert_int_equal((int64_t)b, bytes);
	assert_int_equal((int64_t)c, count);
}

/* Identical (pid, stack)s are one stack, their blocks summed; a cut stack is apart. */
static void test_live_set(void **state)
{
	struct log l;
	struct hd_model *m;

	(void)state;
	log_open(&l);
	dump(&l, 0);
	live(&l, 10, 100, S1, N(S1), 0);
	live(&l, 10, 28, S1, N(S1), 0);
	live(&l, 10, 500, S2, N(S2), 0);
	live(&l, 10, 7, S1, N(S1), REC_CUT_DEPTH);
	live(&l, 11, 128, S1, N(S1), 0);	/* another process: another stack */
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_live(m, (struct want[]){
		{ 10, 500, 1, 0, S2, N(S2) },
		{ 10, 128, 2, 0, S1, N(S1) },
		{ 11, 128, 1, 0, S1, N(S1) },
		{ 10, 7, 1, STACK_TRUNCATED, S1, N(S1) },
	}, 4);
	assert_totals(m, 763, 5);
	assert_int_equal(hd_model__dumps(m), 1);
	assert_int_equal(hd_model__sample_bytes(m), 0);
	assert_false(hd_model__is_diff(m));
	hd_model__free(m);
	log_free(&l);
}

/* Three dumps, with whole-run records that change from one to the next. */
static void three_dumps(struct log *l)
{
	log_open(l);
	dump(l, 0);
	live(l, 10, 64, S1, N(S1), 0);
	stack(l, 10, 1, 64, 64, S1, N(S1));
	proc(l, 10, 64, "app");
	end_dump(l);
	dump(l, 0);
	live(l, 10, 64, S1, N(S1), 0);
	live(l, 10, 64, S1, N(S1), 0);
	stack(l, 10, 5, 320, 128, S1, N(S1));
	proc(l, 10, 300, "app");
	end_dump(l);
	dump(l, 0);
	live(l, 10, 32, S2, N(S2), 0);
	stack(l, 10, 9, 576, 0, S1, N(S1));
	stack(l, 10, 1, 32, 32, S2, N(S2));
	proc(l, 10, 900, "app");
	end_dump(l);
}

/* The dump described is the last, or --dump's; the whole run up to it. */
static void test_dump_selection(void **state)
{
	struct log l;
	struct hd_model *m;
	struct stack **run;
	const int64_t *t;
	unsigned int nd;
	size_t n;

	(void)state;
	three_dumps(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_live(m, (struct want[]){ { 10, 32, 1, 0, S2, N(S2) } }, 1);
	assert_int_equal(hd_model__dumps(m), 3);
	t = hd_model__dump_times(m, &nd);
	assert_int_equal(nd, 3);
	assert_int_equal(t[1], 1795600001250);
	assert_int_equal(t[3], 1795600003250);
	assert_int_equal(hd_model__proc(m, 10)->peak, 900);
	assert_string_equal(hd_model__comm(m, 10), "app");
	hd_model__free(m);
	log_free(&l);

	three_dumps(&l);
	m = model_of(&l, 2, NULL, NULL);
	assert_live(m, (struct want[]){ { 10, 128, 2, 0, S1, N(S1) } }, 1);
	assert_int_equal(hd_model__dumps(m), 2);
	/* The whole run as of dump 2: S1's second record, no S2 yet. */
	run = hd_model__run_stacks(m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(run[0]->allocs, 5);
	assert_int_equal(run[0]->alloc_bytes, 320);
	assert_int_equal(run[0]->live_bytes, 128);
	free(run);
	assert_int_equal(hd_model__proc(m, 10)->peak, 300);
	assert_null(hd_model__proc(m, 11));
	assert_null(hd_model__comm(m, 11));
	hd_model__free(m);
	log_free(&l);
}

/* A stack's history: its live values at each dump it changed in. */
static void test_history(void **state)
{
	struct log l;
	struct hd_model *m;
	const struct rs_point *h;
	size_t n;

	(void)state;
	three_dumps(&l);
	m = model_of(&l, 0, NULL, NULL);
	h = hd_model__history(m, 0, &n);	/* S1: its record came first */
	assert_int_equal(n, 3);
	assert_int_equal(h[0].dump, 1);
	assert_int_equal(h[0].live_bytes, 64);
	assert_int_equal(h[1].dump, 2);
	assert_int_equal(h[1].live_bytes, 128);
	assert_int_equal(h[2].dump, 3);
	assert_int_equal(h[2].live_bytes, 0);
	h = hd_model__history(m, 1, &n);	/* S2: only in dump 3 */
	assert_int_equal(n, 1);
	assert_int_equal(h[0].dump, 3);
	hd_model__free(m);
	log_free(&l);
}

struct each {
	unsigned int calls;
	uint64_t bytes[4];
};

static void on_dump(struct hd_model *m, void *ctx)
{
	struct each *e = ctx;
	uint64_t count;

	assert_true(e->calls < 4);
	hd_model__totals(m, &e->bytes[e->calls++], &count);
}

/* --dump all: each dump's live set handed over once complete; the last stays. */
static void test_each_dump(void **state)
{
	struct each e = { 0 };
	struct log l;
	struct hd_model *m;

	(void)state;
	three_dumps(&l);
	m = model_of(&l, 0, on_dump, &e);
	assert_int_equal(e.calls, 2);
	assert_int_equal(e.bytes[0], 64);
	assert_int_equal(e.bytes[1], 128);
	assert_totals(m, 32, 1);
	hd_model__free(m);
	log_free(&l);
}

/* Dump 1; an exit section of pid 11 (two blocks); dumps 2 and 3. */
static void exit_log(struct log *l)
{
	log_open(l);
	dump(l, 0);
	live(l, 10, 64, S1, N(S1), 0);
	end_dump(l);
	put(l, &(struct record){ .type = REC_EXIT, .pid = 11, .time_s = 1795600001,
				 .live = 2, .bytes = 24, .comm = "gone" });
	map(l, 11, 0x7f0000000000, 0x7f0000100000, 0, "/lib/gone.so");
	live(l, 11, 16, S4, N(S4), 0);
	live(l, 11, 8, S4, N(S4), 0);
	put(l, &(struct record){ .type = REC_END_EXIT, .pid = 11, .live = 2 });
	dump(l, 0);
	live(l, 10, 64, S1, N(S1), 0);
	live(l, 10, 64, S1, N(S1), 0);
	end_dump(l);
	dump(l, 0);
	live(l, 10, 32, S2, N(S2), 0);
	end_dump(l);
}

/* An exit section counts with every dump after it, and is kept across them. */
static void test_exit_sections(void **state)
{
	struct log l;
	struct hd_model *m;

	(void)state;
	exit_log(&l);
	m = model_of(&l, 2, NULL, NULL);
	assert_live(m, (struct want[]){
		{ 10, 128, 2, 0, S1, N(S1) },
		{ 11, 24, 2, 0, S4, N(S4) },
	}, 2);
	/* The section's own mappings name its frames in every later dump. */
	assert_string_equal(hd_model__mapping(m, 11, S4[0])->path, "/lib/gone.so");
	hd_model__free(m);
	log_free(&l);

	exit_log(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_live(m, (struct want[]){
		{ 10, 32, 1, 0, S2, N(S2) },
		{ 11, 24, 2, 0, S4, N(S4) },
	}, 2);
	assert_totals(m, 56, 3);
	assert_string_equal(hd_model__mapping(m, 11, S4[1])->path, "/lib/gone.so");
	hd_model__free(m);
	log_free(&l);
}

/* -s: the model follows dumps and mappings, but takes no live block. */
static void test_follow(void **state)
{
	struct log l;
	struct hd_model_opts o = { 0 };
	struct hd_model *m = hd_model__new(&o, NULL);
	size_t n;
	struct stack **v;

	(void)state;
	assert_non_null(m);
	log_open(&l);
	dump(&l, 4096);
	map(&l, 10, 0x400000, 0x500000, 0, "/usr/bin/app");
	live(&l, 10, 64, S1, N(S1), 0);
	end_dump(&l);
	feed(m, &l, hd_model__follow);
	v = hd_model__live_stacks(m, &n);
	assert_int_equal(n, 0);
	free(v);
	assert_int_equal(hd_model__dumps(m), 1);
	assert_int_equal(hd_model__sample_bytes(m), 4096);
	assert_string_equal(hd_model__mapping(m, 10, S1[0])->path, "/usr/bin/app");
	assert_null(hd_model__mapping(m, 10, 0x500000));	/* [start, end) */
	assert_null(hd_model__mapping(m, 12, S1[0]));		/* another process */
	hd_model__free(m);
	log_free(&l);
}

/* A `map` record over earlier ones replaces them, as a later mmap() does. */
static void test_mappings(void **state)
{
	struct log l;
	struct hd_model *m;

	(void)state;
	log_open(&l);
	dump(&l, 0);
	map(&l, 10, 0x1000, 0x3000, 0, "/a");
	map(&l, 10, 0x2000, 0x4000, 0, "/b");
	map(&l, 10, 0x5000, 0x5000, 0, "/empty");	/* no range: ignored */
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_null(hd_model__mapping(m, 10, 0x1800));
	assert_string_equal(hd_model__mapping(m, 10, 0x2000)->path, "/b");
	assert_string_equal(hd_model__mapping(m, 10, 0x3fff)->path, "/b");
	assert_null(hd_model__mapping(m, 10, 0x5000));
	hd_model__free(m);
	log_free(&l);
}

/* Lines that are not heapsnoop's: a token belongs to the line's pid=. */
static void test_foreign_lines(void **state)
{
	struct hd_model_opts o = { 0 };
	struct hd_model *m = hd_model__new(&o, NULL);
	struct hs_record rec = { .size = 40, .depth = N(S3), .frames = { S3[0] } };
	char token[HS_TOKEN_BUF], line[1024];
	struct hd_line hl;

	(void)state;
	assert_non_null(m);
	assert_true(hs_token_encode(&rec, token, sizeof(token)) > 0);
	snprintf(line, sizeof(line), "2026-11-21T10:00 [app pid=77] leak: %s and %s", token, token);
	hd_line__parse(&hl, line);
	assert_int_equal(hd_line__pid(&hl), 77);
	assert_int_equal(hd_model__take(m, &hl), 0);
	/* A line with no pid: pid 0. */
	snprintf(line, sizeof(line), "%s", token);
	hd_line__parse(&hl, line);
	assert_int_equal(hd_model__take(m, &hl), 0);
	assert_live(m, (struct want[]){
		{ 77, 80, 2, 0, S3, N(S3) },
		{ 0, 40, 1, 0, S3, N(S3) },
	}, 2);
	/* A malformed token: an error for the reader to count, nothing taken. */
	hd_line__parse(&hl, "pid=5 ~m#A");
	assert_true(hd_model__take(m, &hl) < 0);
	assert_totals(m, 120, 3);
	hd_model__free(m);
}

/* A baseline subtracted: every live and whole-run value a difference. */
static void test_base(void **state)
{
	struct log l, b;
	struct hd_model *m, *base;
	struct stack **run;
	size_t n;

	(void)state;
	log_open(&l);
	dump(&l, 0);
	map(&l, 10, 0x400000, 0x500000, 0, "/usr/bin/app");
	for (int i = 0; i < 3; i++)
		live(&l, 10, 100, S1, N(S1), 0);
	live(&l, 10, 50, S2, N(S2), 0);
	stack(&l, 10, 10, 1000, 300, S1, N(S1));
	proc(&l, 10, 1000, "app");
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);

	log_open(&b);
	dump(&b, 0);
	map(&b, 10, 0x400000, 0x410000, 0, "/usr/bin/app.old");
	live(&b, 10, 100, S1, N(S1), 0);
	live(&b, 10, 10, S3, N(S3), 0);
	live(&b, 10, 10, S3, N(S3), 0);
	stack(&b, 10, 4, 400, 100, S1, N(S1));
	proc(&b, 10, 600, "app");
	end_dump(&b);
	base = model_of(&b, 0, NULL, NULL);

	assert_int_equal(hd_model__subtract(m, base), 0);
	assert_true(hd_model__is_diff(m));
	assert_live(m, (struct want[]){
		{ 10, 200, 2, 0, S1, N(S1) },
		{ 10, 50, 1, 0, S2, N(S2) },
		{ 10, -20, -2, 0, S3, N(S3) },
	}, 3);
	assert_totals(m, 230, 1);
	run = hd_model__run_stacks(m, &n);
	assert_int_equal(n, 1);
	assert_int_equal((int64_t)run[0]->allocs, 6);
	assert_int_equal((int64_t)run[0]->alloc_bytes, 600);
	assert_int_equal((int64_t)run[0]->live_bytes, 200);
	free(run);
	assert_int_equal((int64_t)hd_model__proc(m, 10)->peak, 400);
	/* The model's own mappings first, the baseline's where only it had one. */
	assert_string_equal(hd_model__mapping(m, 10, 0x401000)->path, "/usr/bin/app");
	hd_model__free(m);
	log_free(&l);

	/* With no mapping of its own, a frame is named through the baseline's. */
	log_open(&l);
	dump(&l, 0);
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_int_equal(hd_model__subtract(m, base), 0);
	assert_string_equal(hd_model__mapping(m, 10, S3[0])->path, "/usr/bin/app.old");
	assert_live(m, (struct want[]){
		{ 10, -20, -2, 0, S3, N(S3) },
		{ 10, -100, -1, 0, S1, N(S1) },
	}, 2);
	hd_model__free(m);
	hd_model__free(base);
	log_free(&l);
	log_free(&b);
}

/* A sampled dump: each block counts s/p bytes and 1/p blocks, summed then rounded. */
static void test_sampled(void **state)
{
	const uint64_t mean = 4096, small = 64, big = 8192;
	struct log l;
	struct hd_model *m;
	uint64_t bytes;
	double count, small_w = sample_weight(small, mean), big_w = sample_weight(big, mean);
	double p = 1 - exp(-(double)small / mean), sum = 0;

	(void)state;
	log_open(&l);
	dump(&l, mean);
	for (int i = 0; i < 3; i++)
		live(&l, 10, small, S1, N(S1), 0);
	live(&l, 10, big, S2, N(S2), 0);
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_int_equal(hd_model__sample_bytes(m), mean);
	/* What one 64-byte block stands for: 64/p bytes, 1/p blocks (tcmalloc's). */
	hd_model__estimate(m, small, 0, &bytes, &count);
	assert_true(fabs((double)bytes - small / p) <= 0.5);
	assert_true(fabs(count - 1 / p) < 1e-9);
	assert_int_equal(bytes, sample_estimate(small, mean));
	/* Counts are the fractions summed as they come, then rounded: not block by block. */
	for (int i = 0; i < 3; i++)
		sum += small_w;
	assert_live(m, (struct want[]){
		{ 10, (int64_t)(3 * sample_estimate(small, mean)), llround(sum), 0, S1, N(S1) },
		{ 10, (int64_t)sample_estimate(big, mean), llround(big_w), 0, S2, N(S2) },
	}, 2);
	assert_totals(m, (int64_t)(3 * sample_estimate(small, mean) + sample_estimate(big, mean)),
		      llround(sum + big_w));
	hd_model__free(m);
	log_free(&l);

	/* A dump without sample-bytes= holds every block as it is. */
	log_open(&l);
	dump(&l, mean);
	live(&l, 10, small, S1, N(S1), 0);
	end_dump(&l);
	dump(&l, 0);
	live(&l, 10, small, S1, N(S1), 0);
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_int_equal(hd_model__sample_bytes(m), 0);
	assert_live(m, (struct want[]){ { 10, 64, 1, 0, S1, N(S1) } }, 1);
	hd_model__free(m);
	log_free(&l);
}

/*
 * A dump shed by load: blocks with shed=M (kept with p = s/M) stand for
 * M bytes and M/s blocks each, their variance (1 - p) M^2 summed; blocks
 * without it, and those of M bytes or more, stand for themselves.
 */
static void test_shed(void **state)
{
	const uint64_t mean = 4096, small = 64, big = 8192;
	struct log l;
	struct hd_model *m;
	struct record r;
	uint64_t bytes;
	double count, var = 3 * (1 - (double)small / mean) * mean * mean;

	(void)state;
	log_open(&l);
	dump(&l, 0);
	for (int i = 0; i < 3; i++) {
		r = (struct record){ .type = REC_LIVE, .pid = 10, .ptr = 0x1000 + 16 * i,
				     .shed = mean };
		put_token(&l, &r, small, S1, N(S1));
	}
	live(&l, 10, small, S2, N(S2), 0);
	r = (struct record){ .type = REC_LIVE, .pid = 10, .ptr = 0x9000, .shed = mean };
	put_token(&l, &r, big, S3, N(S3));
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_int_equal(hd_model__sample_bytes(m), 0);
	assert_int_equal(hd_model__shed_blocks(m), 4);
	assert_true(hd_model__estimated(m));
	hd_model__estimate(m, small, mean, &bytes, &count);
	assert_int_equal(bytes, mean);
	assert_true(fabs(count - (double)mean / small) < 1e-9);
	hd_model__estimate(m, big, mean, &bytes, &count);
	assert_int_equal(bytes, big);
	assert_true(fabs(count - 1) < 1e-9);
	assert_live(m, (struct want[]){
		{ 10, (int64_t)(3 * mean), 3 * (int64_t)(mean / small), 0, S1, N(S1) },
		{ 10, (int64_t)big, 1, 0, S3, N(S3) },
		{ 10, (int64_t)small, 1, 0, S2, N(S2) },
	}, 3);
	assert_totals(m, (int64_t)(3 * mean + big + small), 3 * (int64_t)(mean / small) + 2);
	assert_true(fabs(hd_model__live_stderr(m) - sqrt(var)) < 1e-6 * sqrt(var));
	hd_model__free(m);
	log_free(&l);
}

/* The join: each (pid, stack) once, live values beside whole-run counts. */
static void test_join(void **state)
{
	struct log l;
	struct hd_model *m;
	const struct hd_joined *j;
	uint32_t *pids;
	size_t n;

	(void)state;
	log_open(&l);
	dump(&l, 0);
	live(&l, 10, 64, S1, N(S1), 0);
	live(&l, 10, 64, S1, N(S1), 0);
	live(&l, 10, 100, S2, N(S2), 0);
	live(&l, 10, 8, S1, N(S1), REC_CUT_UNREADABLE);
	stack(&l, 10, 7, 700, 128, S1, N(S1));
	stack(&l, 11, 3, 30, 0, S4, N(S4));
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_int_equal(hd_model__join(m, &j, &n), 0);
	assert_int_equal(n, 3);
	/* S1: its complete and its cut records joined, and its whole-run record. */
	assert_int_equal(j[0].stack->pid, 10);
	assert_memory_equal(j[0].stack->frames, S1, sizeof(S1));
	assert_int_equal(j[0].flags, STACK_FAULT);
	assert_int_equal(j[0].live_count, 3);
	assert_int_equal(j[0].live_bytes, 136);
	assert_non_null(j[0].run);
	assert_int_equal(j[0].run->allocs, 7);
	assert_int_equal(j[0].run->alloc_bytes, 700);
	/* S2: live only. */
	assert_memory_equal(j[1].stack->frames, S2, sizeof(S2));
	assert_int_equal(j[1].live_bytes, 100);
	assert_null(j[1].run);
	/* S4 of pid 11: whole run only. */
	assert_int_equal(j[2].stack->pid, 11);
	assert_int_equal(j[2].live_count, 0);
	assert_int_equal(j[2].run->allocs, 3);
	pids = hd_model__pids(m, &n);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 10);
	assert_int_equal(pids[1], 11);
	free(pids);
	hd_model__free(m);
	log_free(&l);
}

/* The join is made again once the model has taken more. */
static void test_join_after_more(void **state)
{
	struct log l, more;
	struct hd_model *m;
	const struct hd_joined *j;
	size_t n;

	(void)state;
	log_open(&l);
	dump(&l, 0);
	live(&l, 10, 64, S1, N(S1), 0);
	m = model_of(&l, 0, NULL, NULL);
	assert_int_equal(hd_model__join(m, &j, &n), 0);
	assert_int_equal(n, 1);
	log_open(&more);
	live(&more, 10, 32, S2, N(S2), 0);
	feed(m, &more, hd_model__take);
	assert_int_equal(hd_model__join(m, &j, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(j[1].live_bytes, 32);
	hd_model__free(m);
	log_free(&l);
	log_free(&more);
}

/* A function of this program, its frame named through a `map` record. */
__attribute__((noinline, used)) int named_site(int x)
{
	return x * 3 + 1;
}

/* This program's mapping holding @addr, from /proc/self/maps. */
static int self_mapping(uint64_t addr, uint64_t *start, uint64_t *end, uint64_t *off,
			char *path, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int found = -ENOENT;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, o;
		char perms[8], file[512] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %511[^\n]", &s, &e, perms, &o, file) < 4)
			continue;
		if (addr >= s && addr < e) {
			*start = s;
			*end = e;
			*off = o;
			snprintf(path, cap, "%s", file);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Frames named through the dump's `map` records, as every writer names them. */
static void test_names(void **state)
{
	struct symbolizer_opts so = { 0 };
	struct symbolizer *sym = symbolizer__new(&so);
	struct hd_model_opts o = { 0 };
	struct hd_model *m = hd_model__new(&o, sym);
	uint64_t at = (uint64_t)(uintptr_t)named_site + 4, start, end, off;
	char path[512], name[512];
	struct sym_frame f;
	struct log l;

	(void)state;
	assert_non_null(m);
	assert_int_equal(named_site(1), 4);
	assert_int_equal(self_mapping(at, &start, &end, &off, path, sizeof(path)), 0);
	log_open(&l);
	dump(&l, 0);
	map(&l, 4242, start, end, off, path);
	feed(m, &l, hd_model__take);
	hd_model__lookup(m, 4242, at, &f);
	assert_int_equal(f.status, SYM_OK);
	assert_string_equal(f.func, "named_site");
	hd_model__frame_name(&f, at, name, sizeof(name));
	assert_string_equal(name, "named_site");
	/* Another process has no such mapping: the address alone. */
	hd_model__lookup(m, 1, at, &f);
	assert_int_equal(f.status, SYM_UNMAPPED);
	hd_model__frame_name(&f, 0x1234, name, sizeof(name));
	assert_string_equal(name, "[0x1234]");
	hd_model__free(m);
	symbolizer__free(sym);
	log_free(&l);
}

/* @r with the tokens of @size bytes from @depth @frames (any depth), written. */
static void put_tokens(struct log *l, struct record *r, uint64_t size, const uint64_t *frames,
		       uint32_t depth)
{
	static char tok[REC_TOKENS_BUF];
	int n = records__tokens(frames, depth, size, tok, sizeof(tok));

	assert_true(n > 0);
	r->token = tok;
	r->token_len = (size_t)n;
	r->depth = depth > HS_MAX_DEPTH ? depth : 0;
	put(l, r);
}

/* A stack @n deep, frame i at 0x400000 + 16 i, and some synthetic ones. */
static uint64_t *deep(uint64_t *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		f[i] = 0x400000 + 16 * i;
	return f;
}

/* Deep stacks: one block each, its continuation tokens no blocks of their own. */
static void test_deep_stacks(void **state)
{
	static uint64_t f[REC_MAX_DEPTH];
	struct log l;
	struct hd_model *m;
	struct stack **run;
	size_t n;

	(void)state;
	deep(f, REC_MAX_DEPTH);
	log_open(&l);
	dump(&l, 0);
	for (int i = 0; i < 3; i++) {
		struct record r = { .type = REC_LIVE, .pid = 10, .ptr = 0x1000 + i,
				    .cut = i == 2 ? REC_CUT_ORDER : 0 };

		put_tokens(&l, &r, i == 2 ? 100 : 4096, f, 60);
	}
	{
		struct record r = { .type = REC_LIVE, .pid = 11, .ptr = 0x10, .cut = REC_CUT_DEPTH };

		put_tokens(&l, &r, 7, f, REC_MAX_DEPTH);
	}
	{
		struct record r = { .type = REC_STACK, .pid = 10, .allocs = 3, .allocated = 8292,
				    .live = 3, .bytes = 8292, .cut = REC_CUT_DEPTH };

		put_tokens(&l, &r, 0, f, 62);
	}
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_live(m, (struct want[]){
		{ 10, 8192, 2, 0, f, 60 },
		{ 10, 100, 1, STACK_ORDER, f, 60 },
		{ 11, 7, 1, STACK_TRUNCATED, f, REC_MAX_DEPTH },
	}, 3);
	assert_totals(m, 8299, 4);
	run = hd_model__run_stacks(m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(run[0]->depth, 62);
	assert_int_equal(run[0]->flags, STACK_TRUNCATED);
	assert_memory_equal(run[0]->frames, f, 62 * sizeof(*f));
	free(run);
	hd_model__free(m);
	log_free(&l);
}

/* @line taken by a new model's take (or follow): what it returns. */
static int take_one(struct hd_model *m, const char *line, bool follow)
{
	struct hd_line hl;

	hd_line__parse(&hl, line);
	return follow ? hd_model__follow(m, &hl) : hd_model__take(m, &hl);
}

/* Records that break: said, never a wrong stack; what can be kept, kept cut. */
static void test_broken_records(void **state)
{
	static uint64_t f[70];
	static char tok[REC_TOKENS_BUF], line[REC_TOKENS_BUF + 200];
	struct hd_model_opts o = { 0 };
	struct hd_model *m = hd_model__new(&o, NULL);
	struct stack **run;
	char *second;
	size_t n;

	(void)state;
	assert_non_null(m);
	deep(f, 70);
	assert_true(records__tokens(f, 70, 500, tok, sizeof(tok)) > 0);
	second = strchr(tok, ' ') + 4;
	second[5] = '*';	/* token 2 of 3: not base64 */
	snprintf(line, sizeof(line), "heapsnoop: live pid=3 ptr=0x10 depth=70 %s", tok);
	assert_int_equal(take_one(m, line, false), HS_EBASE64);
	assert_live(m, (struct want[]){ { 3, 500, 1, STACK_TRUNCATED, f, 31 } }, 1);
	/* The same in a whole-run record: kept cut, said. */
	snprintf(line, sizeof(line), "heapsnoop: stack pid=3 allocs=1 allocated=500 frees=0 "
		 "temporary=0 live=1 bytes=500 peak=500 peak_count=1 depth=70 %s", tok);
	assert_int_equal(take_one(m, line, false), HS_EBASE64);
	assert_int_equal(take_one(m, line, true), HS_EBASE64);
	run = hd_model__run_stacks(m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(run[0]->depth, 31);
	assert_int_equal(run[0]->flags, STACK_TRUNCATED);
	free(run);
	/* Malformed records of ours: not taken, not read as another program's tokens. */
	second[5] = 'A';
	*strchr(tok, ' ') = '\0';
	snprintf(line, sizeof(line), "heapsnoop: live pid=3 ptr=0x10 depth=70 %s", tok);
	assert_int_equal(take_one(m, line, false), -HS_ERECORD);
	snprintf(line, sizeof(line), "heapsnoop: live pid=3 ptr=0x10 cut=maybe %s", tok);
	assert_int_equal(take_one(m, line, false), -HS_ERECORD);
	assert_int_equal(take_one(m, line, true), -HS_ERECORD);
	assert_int_equal(take_one(m, "heapsnoop: frame pid=3 addr=0x10 kind=python line=1 "
				  "file=a function=b", false), -HS_ERECORD);
	assert_int_equal(take_one(m, "heapsnoop: jit pid=3 start=0x20 end=0x10 name=x", true),
			 -HS_ERECORD);
	/* A message that begins with a keyword is no record. */
	assert_int_equal(take_one(m, "heapsnoop: exit status 3: 12 events lost", false), 0);
	assert_int_equal(take_one(m, "heapsnoop: live allocations: 12", false), 0);
	assert_totals(m, 500, 1);
	hd_model__free(m);
}

static void frame_rec(struct log *l, int pid, uint64_t addr, const char *kind,
		      const char *fn, const char *file, uint32_t line)
{
	struct record r = { .type = REC_FRAME, .pid = pid, .addr = addr, .line = line,
			    .function = fn, .file = file };

	snprintf(r.kind, sizeof(r.kind), "%s", kind);
	put(l, &r);
}

/* `frame` and `jit` records name what is not native code, in every dump after them. */
static void test_frames(void **state)
{
	const uint64_t a = REC_FRAME_BASE + 1, b = REC_FRAME_BASE + 2, c = REC_FRAME_BASE + 3,
		       d = REC_FRAME_BASE + 4, e = REC_FRAME_BASE + 5, jit = 0x7fd0a4007210;
	const uint64_t s1[] = { 0x401000, a, jit, b }, s2[] = { a, d }, s3[] = { c }, s4[] = { e };
	struct hd_model *m, *base;
	struct sym_frame f;
	char name[512];
	struct log l, lb;

	(void)state;
	log_open(&l);
	dump(&l, 0);
	frame_rec(&l, 10, a, "python", "handle", "/srv/app/server.py", 42);
	frame_rec(&l, 10, b, "lua", "function 'mod.leaf'", "./mod.lua", 0);
	frame_rec(&l, 10, c, "python", "<module>", "/srv/app/main.py", 1);
	put(&l, &(struct record){ .type = REC_JIT, .pid = 10, .start = 0x7fd0a4007200,
				  .end = 0x7fd0a4007400, .function = "JS:*leaf /x/alloc.js:5:14" });
	live(&l, 10, 64, s1, N(s1), 0);
	stack(&l, 10, 1, 32, 0, s3, N(s3));
	end_dump(&l);
	dump(&l, 0);
	frame_rec(&l, 10, a, "python", "handle", "/srv/app/server.py", 42);
	live(&l, 10, 16, s2, N(s2), 0);
	end_dump(&l);
	m = model_of(&l, 0, NULL, NULL);
	hd_model__lookup(m, 10, a, &f);
	assert_int_equal(f.status, SYM_OK);
	assert_string_equal(f.kind, "python");
	assert_string_equal(f.module, "[python]");
	assert_string_equal(f.func, "handle");
	assert_string_equal(f.file, "/srv/app/server.py");
	assert_int_equal(f.line, 42);
	hd_model__frame_name(&f, a, name, sizeof(name));
	assert_string_equal(name, "handle (server.py:42)");
	/* A whole-run stack of an earlier dump: named by that dump's records. */
	hd_model__lookup(m, 10, c, &f);
	assert_string_equal(f.func, "<module>");
	hd_model__lookup(m, 10, b, &f);
	hd_model__frame_name(&f, b, name, sizeof(name));
	assert_string_equal(name, "function 'mod.leaf' (mod.lua)");
	hd_model__lookup(m, 10, jit, &f);
	assert_string_equal(f.kind, "jit");
	assert_true(f.func_off == 0x10);
	hd_model__frame_name(&f, jit, name, sizeof(name));
	assert_string_equal(name, "JS:*leaf /x/alloc.js:5:14");
	/* Native code stays native; another process has none of these. */
	hd_model__lookup(m, 10, 0x401000, &f);
	assert_null(f.kind);
	assert_int_equal(f.status, SYM_UNMAPPED);
	hd_model__lookup(m, 11, jit, &f);
	assert_null(f.kind);
	/* No record of it: said, counted once. */
	assert_int_equal(hd_model__missing_frames(m), 0);
	hd_model__lookup(m, 10, d, &f);
	assert_int_equal(f.status, SYM_NO_FRAME);
	hd_model__lookup(m, 10, d, &f);
	hd_model__lookup(m, 11, a, &f);
	assert_int_equal(f.status, SYM_NO_FRAME);
	assert_int_equal(hd_model__missing_frames(m), 2);
	/* A baseline's frame, of a stack only it had. */
	log_open(&lb);
	dump(&lb, 0);
	frame_rec(&lb, 10, e, "python", "old", "/srv/app/old.py", 7);
	live(&lb, 10, 8, s4, N(s4), 0);
	end_dump(&lb);
	base = model_of(&lb, 0, NULL, NULL);
	assert_int_equal(hd_model__subtract(m, base), 0);
	hd_model__lookup(m, 10, e, &f);
	assert_int_equal(f.status, SYM_OK);
	assert_string_equal(f.func, "old");
	hd_model__free(m);
	hd_model__free(base);
	log_free(&l);
	log_free(&lb);
}

/* A `node` record of @pid at @level: @n frames, outermost first. */
static void node(struct log *l, int pid, uint32_t level, const uint64_t *frames, uint32_t n)
{
	put(l, &(struct record){ .type = REC_NODE, .pid = pid, .level = level, .frames = frames,
				 .nframes = n });
}

/* A `live` or `stack` record of the tree form: its stack, node @id (REC_NODE_PREV: ^). */
static void live_node(struct log *l, int pid, uint64_t size, uint32_t id, uint32_t cut)
{
	put(l, &(struct record){ .type = REC_LIVE, .pid = pid, .ptr = 0x2000 + size, .cut = cut,
				 .has_node = true, .node = id, .size = size });
}

static void stack_node(struct log *l, int pid, uint64_t allocs, uint64_t bytes, uint32_t id)
{
	put(l, &(struct record){ .type = REC_STACK, .pid = pid, .allocs = allocs,
				 .allocated = bytes, .live = 1, .bytes = bytes, .peak = bytes,
				 .peak_count = allocs, .has_node = true, .node = id });
}

/*
 * S1, S2, S3 and S4 as the tracer writes them in the tree form: pid 10's
 * tree (S1 and S2 share 0x403030, 0x402020; S3 at a root of its own; S1
 * cut too: the same frames), pid 11's; the exit section's tree, its own.
 */
static void tree_log(struct log *l)
{
	const uint64_t root[] = { 0x403030, 0x402020 }, a[] = { 0x401010 }, b[] = { 0x401110 },
		       c[] = { 0x401210 }, d[] = { 0x7f0000002000, 0x7f0000001000 };

	log_open(l);
	dump(l, 0);
	put(l, &(struct record){ .type = REC_TREE, .pid = 10, .nodes = 4 });
	node(l, 10, 0, root, 2);				/* 0 */
	node(l, 10, 1, a, 1);					/* 1: S1 */
	live_node(l, 10, 100, REC_NODE_PREV, 0);
	live_node(l, 10, 28, REC_NODE_PREV, 0);
	live_node(l, 10, 7, 1, REC_CUT_DEPTH);
	stack_node(l, 10, 3, 135, REC_NODE_PREV);
	node(l, 10, 1, b, 1);					/* 2: S2 */
	live_node(l, 10, 500, REC_NODE_PREV, 0);
	node(l, 10, 0, c, 1);					/* 3: S3 */
	stack_node(l, 10, 1, 9, 3);
	put(l, &(struct record){ .type = REC_TREE, .pid = 11, .nodes = 1 });
	node(l, 11, 0, d, 2);
	live_node(l, 11, 128, 0, 0);
	end_dump(l);
	put(l, &(struct record){ .type = REC_EXIT, .pid = 12, .time_s = 1795600001,
				 .live = 1, .bytes = 24, .comm = "gone" });
	put(l, &(struct record){ .type = REC_TREE, .pid = 12, .nodes = 1 });
	node(l, 12, 0, d, 1);
	live_node(l, 12, 24, REC_NODE_PREV, 0);
	put(l, &(struct record){ .type = REC_END_EXIT, .pid = 12, .live = 1 });
	dump(l, 0);
	put(l, &(struct record){ .type = REC_TREE, .pid = 10, .nodes = 2 });
	node(l, 10, 0, root, 2);
	node(l, 10, 1, b, 1);
	live_node(l, 10, 50, 1, 0);
	end_dump(l);
}

/*
 * The tree form read as the form with tokens is: the same stacks, the
 * same sums, whole-run stacks alike; an exit section's tree taken again
 * with it after each dump header; a stack ending where another's run
 * goes on (S1 and S2's common part) a stack of its own.
 */
static void test_tree_form(void **state)
{
	const uint64_t d1[] = { 0x7f0000002000 };
	struct hd_model *m;
	struct stack **run;
	struct log l;
	size_t n;

	(void)state;
	tree_log(&l);
	m = model_of(&l, 1, NULL, NULL);
	/* The exit section after dump 1, read before dump 2 begins, is in it. */
	assert_live(m, (struct want[]){
		{ 10, 500, 1, 0, S2, N(S2) },
		{ 10, 128, 2, 0, S1, N(S1) },
		{ 11, 128, 1, 0, S4, N(S4) },
		{ 12, 24, 1, 0, d1, 1 },
		{ 10, 7, 1, STACK_TRUNCATED, S1, N(S1) },
	}, 5);
	run = hd_model__run_stacks(m, &n);
	assert_int_equal(n, 2);
	assert_int_equal(run[0]->depth + run[1]->depth, N(S1) + N(S3));
	for (size_t i = 0; i < n; i++)
		if (run[i]->depth == N(S1))
			assert_memory_equal(run[i]->frames, S1, sizeof(S1));
		else
			assert_memory_equal(run[i]->frames, S3, sizeof(S3));
	free(run);
	hd_model__free(m);
	log_free(&l);

	tree_log(&l);
	m = model_of(&l, 0, NULL, NULL);
	assert_live(m, (struct want[]){
		{ 10, 50, 1, 0, S2, N(S2) },
		{ 12, 24, 1, 0, d1, 1 },
	}, 2);
	hd_model__free(m);
	log_free(&l);
}

/* What does not fit a tree: refused, said; never a stack named by a wrong node. */
static void test_tree_broken(void **state)
{
	struct hd_model_opts o = { 0 };
	struct hd_model *m = hd_model__new(&o, NULL);
	struct hd_line hl = { .text = "x\0y", .parsed = HD_LINE_UNREAD };

	(void)state;
	assert_int_equal(take_one(m, "heapsnoop: dump reason=exit time=1.000 live=1 bytes=1 "
				  "stacks=1", false), 0);
	/* A node before its tree; a node= with no tree. */
	assert_int_equal(take_one(m, "heapsnoop: node pid=3 level=0 frames=0x10", false),
			 -HS_ETREE);
	assert_int_equal(take_one(m, "heapsnoop: live pid=3 ptr=0x10 size=1 node=0", false),
			 -HS_ENODE);
	assert_int_equal(take_one(m, "heapsnoop: tree pid=3 nodes=2", false), 0);
	assert_int_equal(take_one(m, "heapsnoop: live pid=3 ptr=0x10 size=1 node=^", false),
			 -HS_ENODE);
	assert_int_equal(take_one(m, "heapsnoop: node pid=3 level=1 frames=0x10", false),
			 -HS_ETREE);	/* level 1 with no node at level 0 */
	/* Once refused, the tree takes no more: the next would be numbered wrong. */
	assert_int_equal(take_one(m, "heapsnoop: node pid=3 level=0 frames=0x10", false),
			 -HS_ETREE);
	assert_int_equal(take_one(m, "heapsnoop: live pid=3 ptr=0x10 size=1 node=0", false),
			 -HS_ENODE);
	/* More nodes than the tree said; a stack over 1024 frames. */
	assert_int_equal(take_one(m, "heapsnoop: tree pid=4 nodes=1", false), 0);
	assert_int_equal(take_one(m, "heapsnoop: node pid=4 level=0 frames=0x10,0x20", false), 0);
	assert_int_equal(take_one(m, "heapsnoop: node pid=4 level=0 frames=0x30", false),
			 -HS_ETREE);
	assert_int_equal(take_one(m, "heapsnoop: live pid=4 ptr=0x10 size=5 node=0", false), 0);
	assert_int_equal(take_one(m, "heapsnoop: live pid=4 ptr=0x10 size=5 node=^", false),
			 -HS_ENODE);
	assert_totals(m, 5, 1);
	/* A line not read (a NUL byte): no node after it names a stack. */
	assert_int_equal(take_one(m, "heapsnoop: tree pid=5 nodes=3", false), 0);
	assert_int_equal(take_one(m, "heapsnoop: node pid=5 level=0 frames=0x10", false), 0);
	assert_int_equal(hd_model__take(m, &hl), 0);
	assert_int_equal(take_one(m, "heapsnoop: node pid=5 level=0 frames=0x30", false),
			 -HS_ETREE);
	assert_int_equal(take_one(m, "heapsnoop: live pid=5 ptr=0x10 size=5 node=0", false), 0);
	assert_int_equal(take_one(m, "heapsnoop: live pid=5 ptr=0x10 size=5 node=1", false),
			 -HS_ENODE);
	assert_totals(m, 10, 2);
	hd_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_set),
		cmocka_unit_test(test_dump_selection),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_each_dump),
		cmocka_unit_test(test_exit_sections),
		cmocka_unit_test(test_follow),
		cmocka_unit_test(test_mappings),
		cmocka_unit_test(test_foreign_lines),
		cmocka_unit_test(test_base),
		cmocka_unit_test(test_sampled),
		cmocka_unit_test(test_shed),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_join_after_more),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_deep_stacks),
		cmocka_unit_test(test_broken_records),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_tree_form),
		cmocka_unit_test(test_tree_broken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

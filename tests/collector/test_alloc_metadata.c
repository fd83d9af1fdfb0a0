// SPDX-License-Identifier: MIT
/*
 * test_alloc_metadata.c - unit tests of the alloc-metadata library
 * (user/collector/alloc_metadata.c, include/heapsnoop/alloc_metadata.h),
 * built with ASan+UBSan: the layout for every alignment from 1 to a page
 * (user pointer aligned, blob and length behind it, the block recovered),
 * ownership, the callback sequence, a dump parsed back (records.c) and
 * decoded (codec) to the recorded sizes and stacks, its cut stacks and
 * its sampling mean said.
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
#include "sampling.h"

static const uint64_t frames[] = { 0x55be12f1020d, 0x55be12f10261, 0x55be12f102ca,
				   0x7f0000001000, 0x7f0000002000 };

/* Every alignment 1..4096: the layout and the way back to the block. */
static void test_layout(void **state)
{
	struct hs_am *am = hs_am__new(NULL);

	(void)state;
	assert_non_null(am);
	for (size_t align = 1; align <= 4096; align *= 2) {
		for (uint32_t depth = 0; depth <= 5; depth += 5) {
			struct hs_am_site site;
			size_t a = align < HS_AM_MIN_ALIGN ? HS_AM_MIN_ALIGN : align;
			size_t total = hs_am_site__prepare(&site, 100, align, frames, depth, NULL);
			char *block, *user;
			const uint8_t *blob;
			size_t len;
			struct hs_record rec;

			assert_int_equal(total, site.head + 100);
			assert_int_equal(site.head % a, 0);
			assert_true(site.head >= site.len + 2 + sizeof(struct hs_am_node));
			assert_true(site.head < site.len + 2 + sizeof(struct hs_am_node) + a);
			block = aligned_alloc(a, (total + a - 1) / a * a);
			assert_non_null(block);
			user = hs_am__place(am, &site, block);
			assert_ptr_equal(user, block + site.head);
			assert_int_equal((uintptr_t)user % a, 0);
			assert_true(hs_am_owns(user));
			memset(user, 0xee, 100);	/* ASan: the user's bytes are in the block */
			blob = hs_am_blob(user, &len);
			assert_int_equal(len, site.len);
			assert_true(blob >= (const uint8_t *)block);
			assert_int_equal(hs_blob_decode(blob, len, &rec), 0);
			assert_int_equal(rec.size, 100);
			assert_int_equal(rec.depth, depth);
			assert_memory_equal(rec.frames, frames, depth * sizeof(frames[0]));
			assert_int_equal(hs_am_node(user)->size, 100);
			assert_ptr_equal(hs_am__remove(am, user), block);
			assert_false(hs_am_owns(user));	/* a second free is not ours */
			free(block);
		}
	}
	hs_am__free(am);
}

static void test_prepare_errors(void **state)
{
	struct hs_am_site site;
	uint64_t big[HS_MAX_DEPTH + 1] = { 0 };
	int err;

	(void)state;
	assert_int_equal(hs_am_site__prepare(&site, 1, 16, big, HS_MAX_DEPTH + 1, &err), 0);
	assert_int_equal(err, -HS_EDEPTH);
	assert_int_equal(hs_am_site__prepare(&site, 1ULL << 63, 16, frames, 1, &err), 0);
	assert_int_equal(err, -HS_ERANGE);
	assert_int_equal(hs_am_site__prepare(&site, SIZE_MAX - 8, 16, frames, 1, &err), 0);
	assert_int_equal(err, -HS_ERANGE);
}

/*
 * A block not placed here is not taken for ours: glibc's chunk header
 * before it (its size's upper half, 0), or a node's bytes at another
 * address.
 */
static void test_owns_foreign(void **state)
{
	_Alignas(16) char buf[2 * sizeof(struct hs_am_node)] = { 0 };
	struct hs_am *am = hs_am__new(NULL);
	struct hs_am_site site;
	char *block, *user;

	(void)state;
	assert_false(hs_am_owns(buf + sizeof(struct hs_am_node)));
	block = malloc(hs_am_site__prepare(&site, 8, 16, frames, 1, NULL));
	user = hs_am__place(am, &site, block);
	memcpy(buf, hs_am_node(user), sizeof(struct hs_am_node));
	assert_false(hs_am_owns(buf + sizeof(struct hs_am_node)));
	free(hs_am__remove(am, user));
	hs_am__free(am);
}

struct event {
	char kind;	/* 'a' or 'f' */
	const void *user;
	uint64_t size;
	size_t len;
};

struct events {
	struct event v[8];
	int n;
};

static void on_alloc(void *arg, const void *user, uint64_t size, const uint8_t *blob, size_t len)
{
	struct events *e = arg;

	(void)blob;
	e->v[e->n++] = (struct event){ 'a', user, size, len };
}

static void on_free(void *arg, const void *user, uint64_t size)
{
	struct events *e = arg;

	e->v[e->n++] = (struct event){ 'f', user, size, 0 };
}

/* A block of @size bytes from frames[@depth], its stack cut as @cut says. */
static void *place(struct hs_am *am, uint64_t size, uint32_t cut, uint32_t depth)
{
	struct hs_am_site site;
	size_t total = hs_am_site__prepare(&site, size, 16, frames, depth, NULL);
	void *block = malloc(total);

	assert_non_null(block);
	assert_int_equal(site.cut, 0);
	site.cut = cut;
	return hs_am__place(am, &site, block);
}

static void test_callbacks(void **state)
{
	struct events ev = { .n = 0 };
	struct hs_am_ops ops = { .alloc = on_alloc, .free = on_free, .arg = &ev };
	struct hs_am *am = hs_am__new(&ops);
	void *a, *b;
	uint64_t live, bytes;

	(void)state;
	a = place(am, 10, 0, 3);
	b = place(am, 20, 0, 5);
	hs_am__totals(am, &live, &bytes);
	assert_int_equal(live, 2);
	assert_int_equal(bytes, 30);
	free(hs_am__remove(am, a));
	free(hs_am__remove(am, b));
	hs_am__totals(am, &live, &bytes);
	assert_int_equal(live, 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(ev.n, 4);
	assert_int_equal(ev.v[0].kind, 'a');
	assert_ptr_equal(ev.v[0].user, a);
	assert_int_equal(ev.v[0].size, 10);
	assert_true(ev.v[0].len > 0);
	assert_int_equal(ev.v[1].kind, 'a');
	assert_ptr_equal(ev.v[1].user, b);
	assert_int_equal(ev.v[2].kind, 'f');
	assert_ptr_equal(ev.v[2].user, a);
	assert_int_equal(ev.v[2].size, 10);
	assert_int_equal(ev.v[3].kind, 'f');
	assert_ptr_equal(ev.v[3].user, b);
	assert_int_equal(ev.v[3].size, 20);
	hs_am__free(am);
}

static int one_map(FILE *out, int pid, void *arg)
{
	struct record r = { .type = REC_MAP, .pid = pid, .start = 0x55be12f0f000,
			    .end = 0x55be12f11000, .build_id = "-", .path = arg };

	return records__write(out, &r);
}

/* A dump: each line parsed back, each token decoded to what was placed. */
static void test_dump(void **state)
{
	struct hs_am *am = hs_am__new(NULL);
	void *keep[3];
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, nlive = 0;
	FILE *f;
	int order = 0;
	static const enum record_type want[] = { REC_DUMP, REC_MAP, REC_LIVE, REC_LIVE,
						 REC_END_DUMP };

	(void)state;
	/* A sample by bytes of mean 4096: the dump says so, the sizes are real. */
	hs_am__set_sample_bytes(am, 4096);
	keep[0] = place(am, 300, 0, 5);
	keep[1] = place(am, 40, HS_AM_CUT_DEPTH, 2);	/* deeper than its 2 frames */
	keep[2] = place(am, 7, 0, 5);
	free(hs_am__remove(am, keep[2]));
	f = open_memstream(&text, &len);
	assert_int_equal(hs_am__dump(am, f, 4242, "exit", one_map, "/opt/a b"), 0);
	assert_int_equal(fclose(f), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct record r;
		struct hs_record rec;

		assert_int_equal(records__parse(line, &r), 0);
		assert_int_equal(r.type, want[order++]);
		if (r.type == REC_DUMP) {
			assert_string_equal(r.reason, "exit");
			assert_int_equal(r.live, 2);
			/* Bytes are estimates: what the sampled blocks stand for. */
			assert_int_equal(r.bytes, sample_estimate(300, 4096) +
						  sample_estimate(40, 4096));
			assert_true(r.bytes > 4096 * 2);
			assert_int_equal(r.sample_bytes, 4096);
		} else if (r.type == REC_MAP) {
			assert_int_equal(r.pid, 4242);
			assert_string_equal(r.path, "/opt/a b");
		} else if (r.type == REC_LIVE) {
			assert_int_equal(r.pid, 4242);
			assert_non_null(r.token);
			assert_int_equal(hs_token_decode(r.token + 3, r.token_len - 3, &rec), 0);
			/* Newest first. */
			assert_int_equal(r.ptr, (uintptr_t)keep[1 - nlive]);
			assert_int_equal(rec.size, nlive ? 300 : 40);
			assert_int_equal(r.cut, nlive ? 0 : REC_CUT_DEPTH);
			assert_int_equal(rec.depth, nlive ? 5 : 2);
			assert_memory_equal(rec.frames, frames, rec.depth * sizeof(frames[0]));
			nlive++;
		} else {
			assert_int_equal(r.live, 2);
		}
	}
	assert_int_equal(order, 5);
	free(text);
	free(hs_am__remove(am, keep[0]));
	free(hs_am__remove(am, keep[1]));
	hs_am__free(am);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_prepare_errors),
		cmocka_unit_test(test_owns_foreign),
		cmocka_unit_test(test_callbacks),
		cmocka_unit_test(test_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

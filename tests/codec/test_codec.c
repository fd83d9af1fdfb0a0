// SPDX-License-Identifier: MIT
/*
 * test_codec.c - unit tests of the codec (include/heapsnoop/codec.h):
 * every line of tests/data/vectors.tsv (a copy of shared/codec/vectors.tsv)
 * both ways byte for byte, the upstream README's example, random round trips
 * up to 2^63-1, and each error FORMAT.md names.
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

#include "heapsnoop/codec.h"

static const char *vectors_path = "tests/data/vectors.tsv";

/* Parse column 1 of a vector: decimal size, then hex frames. */
static void parse_input(char *col, struct hs_record *rec)
{
	char *save = NULL, *tok = strtok_r(col, " ", &save);

	assert_non_null(tok);
	rec->size = strtoull(tok, NULL, 10);
	rec->depth = 0;
	while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
		assert_true(rec->depth < HS_MAX_DEPTH);
		rec->frames[rec->depth++] = strtoull(tok, NULL, 16);
	}
}

static void test_vectors(void **state)
{
	FILE *f = fopen(vectors_path, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	(void)state;
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		char *in = line, *tok, *bl, *nl;
		struct hs_record rec, back;
		char out[HS_TOKEN_BUF], bout[HS_BLINE_BUF];
		int len;

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		tok = strchr(in, '\t');
		assert_non_null(tok);
		*tok++ = '\0';
		bl = strchr(tok, '\t');
		assert_non_null(bl);
		*bl++ = '\0';
		parse_input(in, &rec);

		len = hs_token_encode(&rec, out, sizeof(out));
		assert_true(len > 0);
		assert_string_equal(out, tok);

		assert_int_equal(hs_token_decode(tok + 3, strlen(tok + 3), &back), 0);
		len = hs_bline_format(&back, bout, sizeof(bout));
		assert_int_equal(len, (int)strlen(bl));
		assert_string_equal(bout, bl);

		/* And the ~b# line parses back to the same record. */
		assert_int_equal(hs_bline_parse(bl + 3, strlen(bl + 3), &back), (int)strlen(bl + 3));
		assert_int_equal(back.size, rec.size);
		assert_int_equal(back.depth, rec.depth);
		assert_memory_equal(back.frames, rec.frames, rec.depth * sizeof(uint64_t));
		n++;
	}
	free(line);
	fclose(f);
	assert_int_equal(n, 600);
}

/* The upstream README's addr2line example, and its mismatched table pair. */
static void test_readme_examples(void **state)
{
	static const struct {
		const char *m, *b;
	} ex[] = {
		{ "IF0BmUQugNCkgCnkhdAYpQa6wAAV",
		  "~b#size: 7520, 0x406651 0x406852 0x406c1b 0x406294" },
		{ "IF0BmagugNDWgCnkhdAYpQa6wAAV",
		  "~b#size: 7520, 0x40666a 0x40686b 0x406c34 0x406294" },
	};
	struct hs_record rec;
	char out[HS_BLINE_BUF], tok[HS_TOKEN_BUF];

	(void)state;
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		assert_int_equal(hs_token_decode(ex[i].m, strlen(ex[i].m), &rec), 0);
		assert_true(hs_bline_format(&rec, out, sizeof(out)) > 0);
		assert_string_equal(out, ex[i].b);
	}
	/* The encoder produces the first (correct) string for that stack. */
	assert_int_equal(hs_bline_parse(ex[0].b + 3, strlen(ex[0].b + 3), &rec),
			 (int)strlen(ex[0].b + 3));
	assert_true(hs_token_encode(&rec, tok, sizeof(tok)) > 0);
	assert_string_equal(tok, "~m#IF0BmUQugNCkgCnkhdAYpQa6wAAV");
}

/* xorshift64*: deterministic, seeded from HS_TEST_SEED when set. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* Values like real stacks (clustered) and like worst cases (any 63 bits). */
static uint64_t rnd_value(const struct hs_record *r, unsigned int i)
{
	switch (rnd() % 5) {
	case 0:
		return rnd() >> 1;
	case 1:
		return rnd() >> (1 + rnd() % 63);
	case 2:
		return i ? r->frames[rnd() % i] : 0;
	case 3:
		return i ? (r->frames[i - 1] + (rnd() % 4096) - 2048) & HS_MAX_VALUE : 0x401000;
	default:
		return HS_MAX_VALUE - rnd() % 3;
	}
}

static void test_roundtrip_random(void **state)
{
	const char *seed = getenv("HS_TEST_SEED");

	(void)state;
	rng_state = seed ? strtoull(seed, NULL, 0) : 0x9e3779b97f4a7c15ULL;
	for (int iter = 0; iter < 200000; iter++) {
		struct hs_record rec = { 0 }, back;
		char tok[HS_TOKEN_BUF], bl[HS_BLINE_BUF];

		rec.depth = (uint32_t)(rnd() % (HS_MAX_DEPTH + 1));
		for (unsigned int i = 0; i < rec.depth; i++)
			rec.frames[i] = rnd_value(&rec, i);
		rec.size = rnd_value(&rec, 0);

		assert_true(hs_token_encode(&rec, tok, sizeof(tok)) > 3);
		assert_int_equal(hs_token_decode(tok + 3, strlen(tok + 3), &back), 0);
		/* A blob does not depend on what its buffer held before. */
		if (iter % 16 == 0) {
			uint8_t b0[HS_BLOB_BUF], b1[HS_BLOB_BUF];
			int n0, n1;

			memset(b0, 0, sizeof(b0));
			memset(b1, 0xff, sizeof(b1));
			n0 = hs_blob_encode(&rec, b0, sizeof(b0));
			n1 = hs_blob_encode(&rec, b1, sizeof(b1));
			assert_true(n0 > 0);
			assert_int_equal(n0, n1);
			assert_memory_equal(b0, b1, (size_t)n0);
		}
		assert_int_equal(back.size, rec.size);
		assert_int_equal(back.depth, rec.depth);
		assert_memory_equal(back.frames, rec.frames, rec.depth * sizeof(uint64_t));

		assert_true(hs_bline_format(&rec, bl, sizeof(bl)) > 0);
		assert_int_equal(hs_bline_parse(bl + 3, strlen(bl + 3), &back), (int)strlen(bl + 3));
		assert_int_equal(back.size, rec.size);
		assert_memory_equal(back.frames, rec.frames, rec.depth * sizeof(uint64_t));
	}
}

static void test_encode_errors(void **state)
{
	struct hs_record rec = { .size = 1, .depth = 1, .frames = { 1 } };
	uint8_t blob[HS_BLOB_BUF];
	char tok[HS_TOKEN_BUF];

	(void)state;
	rec.depth = 32;
	assert_int_equal(hs_blob_encode(&rec, blob, sizeof(blob)), -HS_EDEPTH);
	rec.depth = 1;
	rec.frames[0] = 1ULL << 63;
	assert_int_equal(hs_blob_encode(&rec, blob, sizeof(blob)), -HS_ERANGE);
	rec.frames[0] = 1;
	rec.size = UINT64_MAX;
	assert_int_equal(hs_token_encode(&rec, tok, sizeof(tok)), -HS_ERANGE);
	rec.size = 1;
	assert_int_equal(hs_blob_encode(&rec, blob, 2), -HS_ENOSPC);
	assert_int_equal(hs_token_encode(&rec, tok, 6), -HS_ENOSPC);
}

/* Build a blob from a bit string ("0101...") and the right trailer. */
static size_t make_blob(const char *bits, uint8_t *out)
{
	size_t n = strlen(bits), len = (n + 7) / 8 + 2;

	memset(out, 0, len);
	for (size_t i = 0; i < n; i++)
		if (bits[i] == '1')
			out[i / 8] |= 0x80 >> (i % 8);
	out[len - 2] = (uint8_t)(len >> 8);
	out[len - 1] = (uint8_t)len;
	return len;
}

static void test_decode_errors(void **state)
{
	struct hs_record rec;
	uint8_t blob[64];
	size_t len;

	(void)state;
	/* Valid baseline: depth 0, size 0 -> "00000 0" "0000010 0 0". */
	len = make_blob("000000" "0000010" "00", blob);
	assert_int_equal(hs_blob_decode(blob, len, &rec), 0);
	assert_int_equal(rec.depth, 0);
	assert_int_equal(rec.size, 0);

	assert_int_equal(hs_blob_decode(blob, 2, &rec), -HS_ESHORT);
	blob[len - 1]++;
	assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_ETRAILER);

	/* depth 1, then the stream ends inside the frame's flag field. */
	len = make_blob("000010", blob);
	assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_ETRUNC);

	/* depth 1 whose frame 0 is a delta. */
	len = make_blob("000010" "10" "0000" "00" "0000010" "10" "0000010" "00", blob);
	assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_EDELTA0);

	/* depth 2: literal 1, then a delta reaching back 2 frames (k=1). */
	len = make_blob("000100" "00" "0000010" "10"
			"10" "0010" "00" "0000010" "10" "0000010" "00", blob);
	assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_EDELTAREF);

	/* depth 2: literal 1, then 1 - 2 (s=1, d=2): below 0. */
	len = make_blob("000100" "00" "0000010" "10"
			"10" "0000" "10" "0000100" "100" "0000010" "00", blob);
	assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_EOVERFLOW);

	/* depth 2: literal 2^63-1, then + 2^62: above what any encoder writes. */
	{
		char bits[512] = "000100" "00" "1111110";

		for (int i = 0; i < 63; i++)
			strcat(bits, "1");
		strcat(bits, "0" "10" "0000" "00" "1111110" "1");
		for (int i = 0; i < 62; i++)
			strcat(bits, "0");
		strcat(bits, "0" "0000010" "00");
		len = make_blob(bits, blob);
		assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_EOVERFLOW);
	}

	/* A whole extra zero byte, then a stray 1 bit in the padding. */
	len = make_blob("000000" "0000010" "00" "00000000", blob);
	assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_EPADDING);
	len = make_blob("000000" "0000010" "00" "1", blob);
	assert_int_equal(hs_blob_decode(blob, len, &rec), -HS_EPADDING);
}

static void test_base64(void **state)
{
	uint8_t out[16];
	char txt[32];

	(void)state;
	assert_int_equal(hs_base64_decode("AAA", 3, out, sizeof(out)), 2);
	assert_int_equal(hs_base64_decode("AAA=", 4, out, sizeof(out)), 2);
	assert_int_equal(hs_base64_decode("AAAAA", 5, out, sizeof(out)), -HS_EBASE64);
	assert_int_equal(hs_base64_decode("AA=A", 4, out, sizeof(out)), -HS_EBASE64);
	assert_int_equal(hs_base64_decode("A===", 4, out, sizeof(out)), -HS_EBASE64);
	assert_int_equal(hs_base64_decode("AB==", 4, out, sizeof(out)), -HS_EBASE64);
	assert_int_equal(hs_base64_decode("AA!A", 4, out, sizeof(out)), -HS_EBASE64);
	assert_int_equal(hs_base64_decode("AAAAAAAA", 8, out, 5), -HS_ENOSPC);
	assert_int_equal(hs_base64_encode((const uint8_t *)"ab", 2, txt, sizeof(txt)), 4);
	assert_string_equal(txt, "YWI=");
	assert_int_equal(hs_base64_encode((const uint8_t *)"abc", 3, txt, 4), -HS_ENOSPC);
	/* A damaged token is an error, never another stack. */
	assert_int_equal(hs_token_decode("IF0BmUQugNCkgCnkhdAYpQa6wAA", 27, (struct hs_record[1]){}),
			 -HS_ETRAILER);
	assert_int_equal(hs_token_decode("IF0BmUQugNCkgCnkhdAYpQa6w*AV", 28, (struct hs_record[1]){}),
			 -HS_EBASE64);
}

static void test_token_find(void **state)
{
	const char *line = "12:00:01 [pid 42] ~m#IF0BmUQugNCkgCnkhdAYpQa6wAAV, then ~x ~m";
	const char *t;
	size_t n;

	(void)state;
	t = hs_token_find(line, strlen(line), &n);
	assert_non_null(t);
	assert_int_equal(n, 28);
	assert_memory_equal(t, "IF0BmUQugNCkgCnkhdAYpQa6wAAV", 28);
	t = hs_token_find(t + n, strlen(t + n), &n);
	assert_null(t);
	t = hs_token_find("~m#", 3, &n);
	assert_non_null(t);
	assert_int_equal(n, 0);
}

static void test_bline_parse(void **state)
{
	struct hs_record rec;
	const char *s;

	(void)state;
	/* The reference tool prints a trailing space: it is left unconsumed. */
	s = "size: 7520, 0x406651 0x406852 ";
	assert_int_equal(hs_bline_parse(s, strlen(s), &rec), (int)strlen(s) - 1);
	assert_int_equal(rec.depth, 2);
	s = "size: 5, ";
	assert_int_equal(hs_bline_parse(s, strlen(s), &rec), 9);
	assert_int_equal(rec.depth, 0);
	s = "size: , 0x1";
	assert_int_equal(hs_bline_parse(s, strlen(s), &rec), -HS_ESYNTAX);
	s = "size: 99999999999999999999, 0x1";
	assert_int_equal(hs_bline_parse(s, strlen(s), &rec), -HS_ERANGE);
	s = "size: 1, 0x10000000000000000";
	assert_int_equal(hs_bline_parse(s, strlen(s), &rec), -HS_ERANGE);
	{
		char buf[1024] = "size: 1, 0x1";

		for (int i = 0; i < 31; i++)
			strcat(buf, " 0x1");
		assert_int_equal(hs_bline_parse(buf, strlen(buf), &rec), -HS_EDEPTH);
	}
	assert_string_equal(hs_strerror(-HS_ETRAILER),
			    "length trailer does not match the blob length");
	assert_string_equal(hs_strerror(9999), "unknown error");
	/* One error space: no code is an errno value, and both are named. */
	assert_true(HS_EDEPTH > 4095);
	assert_string_equal(hs_strerror(-ENOMEM), strerror(ENOMEM));
	assert_string_equal(hs_strerror(0), "success");
	assert_string_equal(hs_strerror(HS__ERR_MAX), "unknown error");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_readme_examples),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_token_find),
		cmocka_unit_test(test_bline_parse),
	};

	if (argc > 1)
		vectors_path = argv[1];
	return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}

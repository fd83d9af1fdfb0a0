// SPDX-License-Identifier: MIT
/*
 * test_pylines.c - unit tests of the CPython pieces the tracer and the
 * collector share (user/interp/python/): the location-table decoder
 * against CPython's own co_lines() for every code unit of a dump that
 * lines_dump.py wrote with a real interpreter (test_pylines.sh runs it
 * with Debian's /usr/bin/python3.11, and with a 3.13 and a 3.14 when there);
 * str objects' kinds to UTF-8; the version tables; _Py_DebugOffsets
 * refused when any check fails.
 *
 *   test_pylines DUMP...   (cmocka; each DUMP from lines_dump.py)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interp/python/pycode.h"
#include "interp/python/pylayout.h"
#include "interp/python/pylines.h"

static char **dumps;
static int ndumps;

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	if (!strcmp(s, "-"))
		return 0;
	for (; s[0] && s[1] && n < cap; s += 2) {
		unsigned int b;

		assert_int_equal(sscanf(s, "%2x", &b), 1);
		out[n++] = (uint8_t)b;
	}
	return n;
}

/* Every code unit of every code object of each dump: CPython's line. */
static void test_lines_against_cpython(void **state)
{
	static char line[1 << 22];
	static uint8_t tab[1 << 20];

	(void)state;
	assert_true(ndumps > 0);
	for (int d = 0; d < ndumps; d++) {
		FILE *f = fopen(dumps[d], "r");
		size_t codes = 0, units = 0, tlen = 0;
		int first = 0;

		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			char *save, *tok;

			if (!strncmp(line, "code ", 5)) {
				char hex[1 << 21];

				assert_int_equal(sscanf(line, "code %d %2097151s", &first, hex), 2);
				tlen = unhex(hex, tab, sizeof(tab));
				codes++;
				continue;
			}
			assert_memory_equal(line, "lines", 5);
			strtok_r(line, " \n", &save);
			while ((tok = strtok_r(NULL, " \n", &save))) {
				int start = atoi(tok), end, want;

				end = atoi(strtok_r(NULL, " \n", &save));
				want = atoi(strtok_r(NULL, " \n", &save));
				for (int u = start; u < end; u++) {
					int got = py_lines__at(tab, tlen, first, u);

					if (got != want)
						fail_msg("%s: code at line %d, unit %d: line %d, CPython says %d",
							 dumps[d], first, u, got, want);
					units++;
				}
			}
		}
		fclose(f);
		print_message("%s: %zu code objects, %zu code units, every line CPython's\n",
			      dumps[d], codes, units);
		assert_true(codes > 1000 && units > 100000);
	}
}

/* A table that ends early, a byte that does not start an entry, a bad index. */
static void test_lines_bad(void **state)
{
	/* kind 13 (no columns), 2 units, line +3; then kind 15, 1 unit */
	const uint8_t tab[] = { 0x80 | 13 << 3 | 1, 6, 0x80 | 15 << 3 };

	(void)state;
	assert_int_equal(py_lines__at(tab, sizeof(tab), 10, 0), 13);
	assert_int_equal(py_lines__at(tab, sizeof(tab), 10, 1), 13);
	assert_int_equal(py_lines__at(tab, sizeof(tab), 10, 2), PY_LINE_NONE);
	assert_int_equal(py_lines__at(tab, sizeof(tab), 10, 3), PY_LINE_BAD);
	assert_int_equal(py_lines__at(tab, sizeof(tab), 10, -1), PY_LINE_BAD);
	assert_int_equal(py_lines__at(tab, 1, 10, 0), PY_LINE_BAD);	/* varint cut */
	assert_int_equal(py_lines__at((const uint8_t *)"\x01", 1, 10, 0), PY_LINE_BAD);
}

static void test_str_kinds(void **state)
{
	const uint8_t latin1[] = { 'c', 0xe9 };		/* "cé" */
	const uint16_t ucs2[] = { 0x65e5, 0xd800 };	/* a CJK character, a lone surrogate */
	const uint32_t ucs4[] = { 0x1f40d, 0x110000 };	/* a snake, past Unicode */
	char *s;

	(void)state;
	s = py_str__utf8(latin1, 2, 1);
	assert_string_equal(s, "c\xc3\xa9");
	free(s);
	s = py_str__utf8(ucs2, 2, 2);
	assert_string_equal(s, "\xe6\x97\xa5\xef\xbf\xbd");
	free(s);
	s = py_str__utf8(ucs4, 2, 4);
	assert_string_equal(s, "\xf0\x9f\x90\x8d\xef\xbf\xbd");
	free(s);
	assert_null(py_str__utf8(latin1, 2, 3));
}

static void test_tables(void **state)
{
	struct py_layout l;

	(void)state;
	assert_int_equal(py_layout__table(0x030b02f0, &l), 0);
	assert_int_equal(l.co_code, 184);
	assert_int_equal(l.fr_entry, 68);
	assert_int_equal(l.cf_frame, 8);
	assert_int_equal(py_layout__table(0x030c04f0, &l), 0);
	assert_int_equal(l.co_code, 192);
	assert_int_equal(l.fr_entry, -1);
	assert_int_equal(py_layout__table(0x030d05f0, &l), 0);
	assert_int_equal(l.cf_frame, -1);
	assert_int_equal(l.fr_code_tag, 0);
	assert_int_equal(py_layout__table(0x030e08f0, &l), 0);
	assert_int_equal(l.rt_tss_key, 2336);
	assert_int_equal(l.co_code, 208);
	assert_int_equal(l.fr_code_tag, 3);
	assert_int_equal(l.fr_tlbc, -1);
	assert_int_equal(py_layout__table(0x030a0cf0, &l), -ENOTSUP);
	assert_int_equal(py_layout__table(0x030f00f0, &l), -ENOTSUP);
}

/* 3.13.5's _Py_DebugOffsets, as its headers make it; each check refuses. */
static void debug_offsets_313(uint64_t *w)
{
	memcpy(w, "xdebugpy", 8);
	memset(w + 1, 0, 8 * 72);
	w[1 + 0] = 0x030d05f0;
	w[1 + 2] = 283376;	/* sizeof(_PyRuntimeState) */
	w[1 + 18] = 256; w[1 + 22] = 72;	/* thread state: current_frame */
	w[1 + 27] = 80; w[1 + 28] = 8; w[1 + 29] = 0; w[1 + 30] = 56; w[1 + 32] = 70;
	w[1 + 33] = 208; w[1 + 34] = 112; w[1 + 35] = 120; w[1 + 36] = 128;
	w[1 + 37] = 136; w[1 + 38] = 68; w[1 + 42] = 200;
	w[1 + 43] = 16; w[1 + 44] = 8;
	w[1 + 63] = 40; w[1 + 64] = 16; w[1 + 65] = 32;
	w[1 + 66] = 56; w[1 + 67] = 32; w[1 + 68] = 16; w[1 + 69] = 40;
}

#define FROM(w, len, version, size, l) \
	py_layout__from_debug_offsets(w, len, version, size, l, why, sizeof(why))

static void test_debug_offsets(void **state)
{
	uint64_t w[73];
	struct py_layout l;
	char why[512];

	(void)state;
	debug_offsets_313(w);
	assert_int_equal(FROM(w, sizeof(w), 0x030d05f0, 283376, &l), 0);
	assert_int_equal(l.ts_frame, 72);
	assert_int_equal(l.fr_owner, 70);
	assert_int_equal(l.co_code, 200);
	assert_int_equal(l.co_firsttraceable, 184);	/* from the table */
	assert_int_equal(l.rt_tss_key, 2160);
	assert_int_equal(l.fr_read, 71);
	assert_int_equal(l.fr_tlbc, -1);
	assert_int_equal(l.str_compact, 56);
	/* another version, another runtime size, a field outside its struct, a short blob */
	assert_int_equal(FROM(w, sizeof(w), 0x030d04f0, 283376, &l), -EINVAL);
	assert_non_null(strstr(why, "says version 0x30d05f0, its Py_Version 0x30d04f0"));
	assert_int_equal(FROM(w, sizeof(w), 0x030d05f0, 283377, &l), -EINVAL);
	w[1 + 32] = 80;
	assert_int_equal(FROM(w, sizeof(w), 0x030d05f0, 283376, &l), -EINVAL);
	debug_offsets_313(w);
	assert_int_equal(FROM(w, 100, 0x030d05f0, 283376, &l), -EINVAL);
	/* free-threaded 3.13: the table's fields of its build */
	w[1 + 1] = 1;
	assert_int_equal(FROM(w, sizeof(w), 0x030d05f0, 283376, &l), 0);
	assert_int_equal(l.co_firsttraceable, 200);
	assert_int_equal(l.tp_dealloc, 64);
	assert_int_equal(l.str_state_shift, 0);	/* 3.13t's interned is still 2 bits */
	w[1 + 1] = 2;
	assert_int_equal(FROM(w, sizeof(w), 0x030d05f0, 283376, &l), -EINVAL);
	debug_offsets_313(w);
	/* a version whose _Py_DebugOffsets this reader does not know */
	w[1] = 0x030f00a1;
	assert_int_equal(FROM(w, sizeof(w), 0x030f00a1, 283376, &l), -ENOTSUP);
	assert_string_equal(why, "_Py_DebugOffsets of version 0x30f00a1: a debug-offsets layout "
			    "this heapsnoop does not know (it reads 3.13's and 3.14's); a newer "
			    "heapsnoop may (--no-interp: native frames only)");
	debug_offsets_313(w);
	memcpy(w, "xdebugPY", 8);
	assert_int_equal(FROM(w, sizeof(w), 0x030d05f0, 283376, &l), -ENOTSUP);
	assert_non_null(strstr(why, "_Py_DebugOffsets cookie (\"xdebugpy\") not found at the start "
				    "of _PyRuntime: not a 3.13 or later build"));
	assert_int_equal(FROM(w, sizeof(w), 0x030b02f0, 283376, &l), -ENOTSUP);
}

/*
 * Free-threaded 3.14.7's _Py_DebugOffsets (--disable-gil), as its headers
 * make it: its bigger object headers and thread-local bytecode.
 */
static void debug_offsets_314t(uint64_t *w)
{
	memcpy(w, "xdebugpy", 8);
	memset(w + 1, 0, 8 * 94);
	w[1 + 0] = 0x030e07f0;
	w[1 + 1] = 1;		/* free_threaded */
	w[1 + 2] = 362368;	/* sizeof(_PyRuntimeState) */
	w[1 + 21] = 15600; w[1 + 25] = 72;	/* thread state: current_frame */
	w[1 + 30] = 88; w[1 + 31] = 8; w[1 + 32] = 0; w[1 + 33] = 56; w[1 + 35] = 78;
	w[1 + 37] = 72;		/* tlbc_index */
	w[1 + 38] = 248; w[1 + 39] = 128; w[1 + 40] = 136; w[1 + 41] = 144;
	w[1 + 42] = 152; w[1 + 43] = 84; w[1 + 47] = 232; w[1 + 48] = 224;
	w[1 + 49] = 32; w[1 + 50] = 24;	/* PyObject: ob_tid, ob_ref_local, ob_ref_shared */
	w[1 + 73] = 56; w[1 + 74] = 32; w[1 + 75] = 48;
	w[1 + 76] = 72; w[1 + 77] = 48; w[1 + 78] = 32; w[1 + 79] = 56;
}

static void test_debug_offsets_314(void **state)
{
	uint64_t w[95];
	struct py_layout l;
	char why[512];

	(void)state;
	debug_offsets_314t(w);
	assert_int_equal(FROM(w, sizeof(w), 0x030e07f0, 362368, &l), 0);
	assert_true(l.free_threaded);
	assert_int_equal(l.ob_type, 24);
	assert_int_equal(l.tp_dealloc, 64);
	assert_int_equal(l.fr_owner, 78);
	assert_int_equal(l.fr_tlbc, 72);
	assert_int_equal(l.co_tlbc, 224);
	assert_int_equal(l.co_code, 232);
	assert_int_equal(l.co_firsttraceable, 208);
	assert_int_equal(l.str_ascii, 56);
	assert_int_equal(l.str_compact, 72);
	assert_int_equal(l.fr_code_tag, 3);
	assert_int_equal(l.fr_read, 79);
	assert_int_equal(l.str_state_shift, 6);
	/* 3.14's words read as 3.13's would not check: the map is the version's */
	assert_int_equal(FROM(w, 8 + 8 * 72, 0x030e07f0, 362368, &l), -EINVAL);
	w[1 + 48] = 250;	/* co_tlbc beyond the code object */
	assert_int_equal(FROM(w, sizeof(w), 0x030e07f0, 362368, &l), -EINVAL);
	assert_non_null(strstr(why, "thread-local bytecode"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_against_cpython),
		cmocka_unit_test(test_lines_bad),
		cmocka_unit_test(test_str_kinds),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_debug_offsets),
		cmocka_unit_test(test_debug_offsets_314),
	};

	dumps = argv + 1;
	ndumps = argc - 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_frametab.c - unit tests of the frames that are not native code
 * (user/common/frametab.c): interpreter frames interned to synthetic
 * addresses, JIT ranges and their overlaps, a dump's `frame` and `jit`
 * records written for what its stacks use and nothing else, read back by
 * another table (as heapdecode reads them) to the same names; a frame
 * without its record said; texts cut at their limits and made printable.
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

#include "frametab.h"
#include "records.h"

static uint64_t intern(struct frametab *ft, uint32_t pid, const char *kind, const char *fn,
		       const char *file, uint32_t line)
{
	uint64_t a = 0;

	assert_int_equal(frametab__intern(ft, pid, kind, fn, file, line, &a), 0);
	assert_true(rec_is_frame_addr(a));
	return a;
}

static void test_intern(void **state)
{
	struct frametab *ft = frametab__new();
	uint64_t a, b, c, d, x;

	(void)state;
	assert_non_null(ft);
	a = intern(ft, 10, "python", "f5", "chain_a.py", 14);
	b = intern(ft, 10, "python", "f5", "chain_a.py", 15);
	c = intern(ft, 11, "python", "f5", "chain_a.py", 14);
	d = intern(ft, 10, "lua", "f5", "chain_a.py", 14);
	assert_true(a != b && a != c && a != d && b != c && b != d && c != d);
	assert_true(intern(ft, 10, "python", "f5", "chain_a.py", 14) == a);
	assert_true(intern(ft, 10, "python", "f5", NULL, 14) ==
		    intern(ft, 10, "python", "f5", "", 14));
	assert_int_equal(frametab__intern(ft, 10, "jit", "f", NULL, 0, &x), -EINVAL);
	assert_int_equal(frametab__intern(ft, 10, "Python", "f", NULL, 0, &x), -EINVAL);
	assert_int_equal(frametab__intern(ft, 10, "", "f", NULL, 0, &x), -EINVAL);
	assert_int_equal(frametab__intern(ft, 10, "python", NULL, NULL, 0, &x), -EINVAL);
	/* A process forgotten: its addresses are never given again. */
	frametab__forget(ft, 10);
	assert_true(intern(ft, 10, "python", "f5", "chain_a.py", 14) > d);
	assert_true(intern(ft, 11, "python", "f5", "chain_a.py", 14) == c);
	frametab__free(ft);
}

/* The records a dump writes, in a string. */
static char *dump_of(struct frametab *ft, uint32_t pid, const uint64_t *const *stacks,
		     const uint32_t *depths, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	frametab__dump_begin(ft);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(frametab__need(ft, pid, stacks[i], depths[i]), 0);
	assert_int_equal(frametab__write(ft, pid, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Every record of @text taken into a new table. */
static struct frametab *read_back(char *text)
{
	struct frametab *ft = frametab__new();
	char *save = NULL;

	assert_non_null(ft);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		struct record r;

		assert_int_equal(records__parse(l, &r), 0);
		assert_int_equal(frametab__take(ft, &r), 0);
	}
	return ft;
}

static void assert_frame(struct frametab *ft, uint32_t pid, uint64_t addr, const char *kind,
			 const char *fn, const char *file, int line)
{
	struct sym_frame f;

	assert_true(frametab__symbolize(ft, pid, addr, &f));
	assert_int_equal(f.status, SYM_OK);
	assert_string_equal(f.kind, kind);
	assert_string_equal(f.func, fn);
	if (file)
		assert_string_equal(f.file, file);
	else
		assert_null(f.file);
	assert_int_equal(f.line, line);
	assert_int_equal(f.ninline, 0);
}

/*
 * A frame renamed (a better name learned for it, as Lua's global names
 * come): the next dump names the old address so, a reader taking both
 * dumps ends with the new name, its old texts intern to a new address,
 * another process's frames and the new address keep theirs.
 */
static void test_rename(void **state)
{
	struct frametab *ft = frametab__new(), *rd;
	uint64_t old, new, other, again, s[2];
	const uint64_t *stacks[] = { s };
	const uint32_t depth[] = { 2 };
	char *first, *second, *both, want[128];
	struct sym_frame f;

	(void)state;
	old = intern(ft, 7, "lua", "global 'top'", "chain.lua", 62);
	other = intern(ft, 8, "lua", "global 'top'", "chain.lua", 62);
	s[0] = old;
	s[1] = intern(ft, 7, "lua", "main chunk", "chain.lua", 70);
	first = dump_of(ft, 7, stacks, depth, 1);
	assert_non_null(strstr(first, "function=global%20'top'"));
	new = intern(ft, 7, "lua", "function 'top'", "chain.lua", 62);
	assert_int_equal(frametab__rename(ft, 7, old, new), 0);
	/* Again, or to itself: nothing changes. */
	assert_int_equal(frametab__rename(ft, 7, old, new), 0);
	assert_int_equal(frametab__rename(ft, 7, new, new), 0);
	assert_int_equal(frametab__rename(ft, 7, old, REC_FRAME_BASE + 999), -ENOENT);
	assert_int_equal(frametab__rename(ft, 9, old, new), -ENOENT);
	assert_true(frametab__symbolize(ft, 7, old, &f));
	assert_string_equal(f.func, "function 'top'");
	assert_int_equal(f.line, 62);
	assert_frame(ft, 7, new, "lua", "function 'top'", "chain.lua", 62);
	assert_frame(ft, 8, other, "lua", "global 'top'", "chain.lua", 62);
	again = intern(ft, 7, "lua", "global 'top'", "chain.lua", 62);
	assert_true(again != old && again != new);
	assert_true(intern(ft, 7, "lua", "function 'top'", "chain.lua", 62) == new);
	second = dump_of(ft, 7, stacks, depth, 1);
	assert_null(strstr(second, "global%20'top'"));
	snprintf(want, sizeof(want), "addr=0x%llx kind=lua line=62 file=chain.lua function=function%%20'top'\n",
		 (unsigned long long)old);
	assert_non_null(strstr(second, want));
	assert_true(asprintf(&both, "%s%s", first, second) > 0);
	rd = read_back(both);
	assert_frame(rd, 7, old, "lua", "function 'top'", "chain.lua", 62);
	assert_frame(rd, 7, s[1], "lua", "main chunk", "chain.lua", 70);
	free(first);
	free(second);
	free(both);
	frametab__free(rd);
	frametab__free(ft);
}

/* A dump names what its stacks use, once each, and another table reads it. */
static void test_dump_and_read(void **state)
{
	struct frametab *ft = frametab__new(), *rd;
	uint64_t leaf, mid, top, unused, s1[6], s2[3];
	const uint64_t *stacks[] = { s1, s2 };
	const uint32_t depths[] = { 6, 3 };
	struct sym_frame f;
	char *text;

	(void)state;
	leaf = intern(ft, 7, "python", "K.__init__", "/srv/app/k.py", 17);
	mid = intern(ft, 7, "python", "make.<locals>.<listcomp>", "/srv/app/m y.py", 3);
	top = intern(ft, 7, "lua", "function 'mod.leaf'", "./mod.lua", 0);
	unused = intern(ft, 7, "python", "<module>", "/srv/app/main.py", 1);
	assert_int_equal(frametab__add_jit(ft, 7, 0x7f0000001000, 0x7f0000001400,
					   "JS:*leaf /x/alloc.js:5:14"), 0);
	assert_int_equal(frametab__add_jit(ft, 7, 0x7f0000002000, 0x7f0000002100, "unused"), 0);
	/* Native frames, interpreter frames, a JIT frame: interleaved. */
	memcpy(s1, (uint64_t[]){ 0x401000, leaf, 0x4b0000, mid, 0x7f0000001010, leaf }, sizeof(s1));
	memcpy(s2, (uint64_t[]){ top, 0x402000, mid }, sizeof(s2));
	text = dump_of(ft, 7, stacks, depths, 2);
	assert_string_equal(text,
		"heapsnoop: frame pid=7 addr=0x4000000000000000 kind=python line=17 "
		"file=/srv/app/k.py function=K.__init__\n"
		"heapsnoop: frame pid=7 addr=0x4000000000000001 kind=python line=3 "
		"file=/srv/app/m%20y.py function=make.<locals>.<listcomp>\n"
		"heapsnoop: frame pid=7 addr=0x4000000000000002 kind=lua line=0 "
		"file=./mod.lua function=function%20'mod.leaf'\n"
		"heapsnoop: jit pid=7 start=0x7f0000001000 end=0x7f0000001400 "
		"name=JS:*leaf%20/x/alloc.js:5:14\n");
	/* Another process's dump has none of these. */
	free(text);
	text = dump_of(ft, 8, stacks, depths, 2);
	assert_string_equal(text, "");
	free(text);
	/* The next dump: what it uses, again. */
	text = dump_of(ft, 7, stacks + 1, depths + 1, 1);
	rd = read_back(text);
	assert_frame(rd, 7, top, "lua", "function 'mod.leaf'", "./mod.lua", 0);
	assert_frame(rd, 7, mid, "python", "make.<locals>.<listcomp>", "/srv/app/m y.py", 3);
	assert_false(frametab__symbolize(rd, 7, 0x402000, &f));
	/* One it does not have: said, counted once. */
	assert_int_equal(frametab__missing(rd), 0);
	assert_true(frametab__symbolize(rd, 7, leaf, &f));
	assert_int_equal(f.status, SYM_NO_FRAME);
	assert_null(f.func);
	assert_true(frametab__symbolize(rd, 7, leaf, &f));
	assert_true(frametab__symbolize(rd, 9, unused, &f));
	assert_int_equal(f.status, SYM_NO_FRAME);
	assert_int_equal(frametab__missing(rd), 2);
	frametab__free(rd);
	free(text);
	/* The writer's own table names them too, JIT frames by their range. */
	assert_frame(ft, 7, leaf, "python", "K.__init__", "/srv/app/k.py", 17);
	assert_true(frametab__symbolize(ft, 7, 0x7f0000001010, &f));
	assert_string_equal(f.func, "JS:*leaf /x/alloc.js:5:14");
	assert_string_equal(f.module, "[jit]");
	assert_true(f.func_off == 0x10);
	/* A return address is looked up by its call, the byte before. */
	assert_true(frametab__symbolize(ft, 7, 0x7f0000001400, &f));
	assert_false(frametab__symbolize(ft, 7, 0x7f0000001000, &f));
	assert_false(frametab__symbolize(ft, 7, 0x7f0000001401, &f));
	assert_false(frametab__symbolize(ft, 8, 0x7f0000001010, &f));
	frametab__free(ft);
}

/*
 * A jitdump's code named piecewise by its lines: each piece's record
 * carries its file:line and its function's start, back through the log,
 * and names a frame with them (its offset from the function's start).
 */
static void test_jit_lines(void **state)
{
	struct frametab *ft = frametab__new(), *rd;
	uint64_t s1[3] = { 0x401000, 0x7f0000001058, 0x7f0000001071 };
	const uint64_t *stacks[] = { s1 };
	const uint32_t depths[] = { 3 };
	struct sym_frame f;
	char *text;

	(void)state;
	assert_int_equal(frametab__add_jit_line(ft, 5, 0x7f0000001040, 0x7f0000001058,
						"JS:*leaf /x/a.js:5:14", "/x/a.js", 7,
						0x7f0000001000), 0);
	assert_int_equal(frametab__add_jit_line(ft, 5, 0x7f0000001060, 0x7f0000001080,
						"JS:*leaf /x/a.js:5:14", "/x/a.js", 9,
						0x7f0000001000), 0);
	/* A piece before its function's start: refused. */
	assert_int_equal(frametab__add_jit_line(ft, 5, 0x7f0000002000, 0x7f0000002010, "x",
						"f", 1, 0x7f0000002001), -EINVAL);
	text = dump_of(ft, 5, stacks, depths, 1);
	assert_string_equal(text,
		"heapsnoop: jit pid=5 start=0x7f0000001040 end=0x7f0000001058 "
		"name=JS:*leaf%20/x/a.js:5:14 code=0x7f0000001000 line=7 file=/x/a.js\n"
		"heapsnoop: jit pid=5 start=0x7f0000001060 end=0x7f0000001080 "
		"name=JS:*leaf%20/x/a.js:5:14 code=0x7f0000001000 line=9 file=/x/a.js\n");
	rd = read_back(text);
	for (int i = 0; i < 2; i++) {
		struct frametab *t = i ? rd : ft;

		/* The call ending the first piece: named by it, not the next. */
		assert_true(frametab__symbolize(t, 5, 0x7f0000001058, &f));
		assert_string_equal(f.func, "JS:*leaf /x/a.js:5:14");
		assert_string_equal(f.kind, "jit");
		assert_string_equal(f.file, "/x/a.js");
		assert_int_equal(f.line, 7);
		assert_true(f.func_off == 0x58);
		assert_true(frametab__symbolize(t, 5, 0x7f0000001071, &f));
		assert_int_equal(f.line, 9);
		assert_true(f.func_off == 0x71);
		/* Between the pieces: no line was given for it. */
		assert_false(frametab__symbolize(t, 5, 0x7f000000105c, &f));
	}
	frametab__free(rd);
	free(text);
	frametab__free(ft);
}

/* A perf map's reused range: the newer line names it, the older is gone. */
static void test_jit_overlap(void **state)
{
	struct frametab *ft = frametab__new();
	struct sym_frame f;
	const char *first;

	(void)state;
	assert_int_equal(frametab__add_jit(ft, 1, 0x1000, 0x2000, "old"), 0);
	assert_int_equal(frametab__add_jit(ft, 1, 0x3000, 0x3100, "kept"), 0);
	assert_true(frametab__symbolize(ft, 1, 0x1800, &f));
	assert_string_equal(f.func, "old");
	first = f.func;
	assert_int_equal(frametab__add_jit(ft, 1, 0x1800, 0x1900, "new"), 0);
	assert_true(frametab__symbolize(ft, 1, 0x1850, &f));
	assert_string_equal(f.func, "new");
	assert_false(frametab__symbolize(ft, 1, 0x1100, &f));
	assert_true(frametab__symbolize(ft, 1, 0x30ff, &f));
	assert_string_equal(f.func, "kept");
	/* What was handed out stays readable after it was replaced. */
	assert_string_equal(first, "old");
	/* An older range added later does not replace a newer one it meets. */
	assert_int_equal(frametab__add_jit(ft, 1, 0x2f00, 0x3080, "overlaps kept"), 0);
	assert_true(frametab__symbolize(ft, 1, 0x3000, &f));
	assert_string_equal(f.func, "overlaps kept");
	assert_int_equal(frametab__add_jit(ft, 1, 0x5000, 0x5000, "empty"), -EINVAL);
	assert_int_equal(frametab__add_jit(ft, 1, 0x5000, 0x6000, NULL), -EINVAL);
	frametab__free(ft);
}

/* Each dump repeats its records: a reader keeps one of each, the first it handed out. */
static void test_repeated_records(void **state)
{
	struct frametab *ft = frametab__new();
	struct record r;
	struct sym_frame f;
	const char *fn;

	(void)state;
	assert_int_equal(records__parse("heapsnoop: frame pid=3 addr=0x4000000000000009 "
					"kind=python line=4 file=a.py function=g", &r), 0);
	assert_int_equal(frametab__take(ft, &r), 0);
	assert_true(frametab__symbolize(ft, 3, 0x4000000000000009, &f));
	fn = f.func;
	assert_int_equal(frametab__take(ft, &r), 0);
	assert_true(frametab__symbolize(ft, 3, 0x4000000000000009, &f));
	assert_ptr_equal(f.func, fn);
	/* Another record for it (a log appended to by another run): it wins. */
	assert_int_equal(records__parse("heapsnoop: frame pid=3 addr=0x4000000000000009 "
					"kind=lua line=5 file=b.lua function=h", &r), 0);
	assert_int_equal(frametab__take(ft, &r), 0);
	assert_frame(ft, 3, 0x4000000000000009, "lua", "h", "b.lua", 5);
	assert_string_equal(fn, "g");
	/* A frame looked up before its record: counted missing until it comes. */
	assert_true(frametab__symbolize(ft, 3, 0x4000000000000001, &f));
	assert_int_equal(frametab__missing(ft), 1);
	assert_int_equal(records__parse("heapsnoop: frame pid=3 addr=0x4000000000000001 "
					"kind=python line=1 file=- function=x", &r), 0);
	assert_int_equal(frametab__take(ft, &r), 0);
	assert_int_equal(frametab__missing(ft), 0);
	assert_frame(ft, 3, 0x4000000000000001, "python", "x", NULL, 1);
	/* Same JIT range again: the first kept. */
	assert_int_equal(records__parse("heapsnoop: jit pid=3 start=0x10 end=0x20 name=j", &r), 0);
	assert_int_equal(frametab__take(ft, &r), 0);
	assert_true(frametab__symbolize(ft, 3, 0x18, &f));
	fn = f.func;
	assert_int_equal(frametab__take(ft, &r), 0);
	assert_true(frametab__symbolize(ft, 3, 0x18, &f));
	assert_ptr_equal(f.func, fn);
	assert_int_equal(records__parse("heapsnoop: dump reason=exit time=1.000 live=0 bytes=0 "
					"stacks=0", &r), 0);
	assert_int_equal(frametab__take(ft, &r), 1);
	frametab__free(ft);
}

/* Texts as the program gave them, cut at their limits, printed safely. */
static void test_texts(void **state)
{
	static char longfn[REC_NAME_MAX + 100], longfile[REC_FILE_MAX + 100];
	struct frametab *ft = frametab__new(), *rd;
	struct sym_frame f;
	uint64_t a, b, c;
	const uint64_t st[3];
	char *text;

	(void)state;
	/* A 2-byte character across the limit: cut before it. */
	memset(longfn, 'x', sizeof(longfn) - 1);
	memcpy(longfn + REC_NAME_MAX - 4, "\xc3\xa9", 2);
	memset(longfile, '/', sizeof(longfile) - 1);
	a = intern(ft, 2, "python", longfn, longfile, 1);
	b = intern(ft, 2, "lua", "bad\n\x1b[2J%\xff caf\xc3\xa9", "\xc2\x85", 2);
	c = intern(ft, 2, "python", "f", "-", 3);
	memcpy((uint64_t *)st, (uint64_t[]){ a, b, c }, sizeof(st));
	text = dump_of(ft, 2, (const uint64_t *const[]){ st }, (const uint32_t[]){ 3 }, 1);
	rd = read_back(text);
	assert_true(frametab__symbolize(rd, 2, a, &f));
	assert_int_equal(strlen(f.func), REC_NAME_MAX - 1);
	assert_memory_equal(f.func + REC_NAME_MAX - 8, "xxxx...", 8);
	assert_int_equal(strlen(f.file), REC_FILE_MAX);
	assert_string_equal(f.file + REC_FILE_MAX - 3, "...");
	assert_frame(rd, 2, b, "lua", "bad%0A%1B[2J%25%FF caf\xc3\xa9", "%C2%85", 2);
	assert_frame(rd, 2, c, "python", "f", "-", 3);
	frametab__free(rd);
	free(text);
	frametab__free(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_dump_and_read),
		cmocka_unit_test(test_rename),
		cmocka_unit_test(test_jit_overlap),
		cmocka_unit_test(test_jit_lines),
		cmocka_unit_test(test_repeated_records),
		cmocka_unit_test(test_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

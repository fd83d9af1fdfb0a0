// SPDX-License-Identifier: MIT
/*
 * test_perfmap.c - unit tests of the perf map reader
 * (user/tracer/maps/perfmap.c): lines parsed as perf's jit-interface.txt
 * gives them, the newest line naming a range made again (against a plain
 * search of every line, for thousands of random overlapping ranges), hostile
 * content (malformed numbers, lines too long, control characters, a line not
 * yet whole), and the real file of this very process in /tmp, looked for
 * again after a while, read again as it grows, read from its start when made
 * shorter, refused through a symbolic link.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "maps/perfmap.h"

static void feed(struct perf_map *pm, const char *text)
{
	assert_int_equal(perf_map__feed(pm, text, strlen(text)), strlen(text));
}

static const char *name_at(struct perf_map *pm, uint64_t addr)
{
	static struct perf_map_entry e;

	/* The retry time is long: a file not found is looked for once. */
	return perf_map__lookup(pm, addr, UINT64_MAX, &e) ? NULL : e.name;
}

static void lines_and_newest_name(void **state)
{
	struct perf_map *pm = perf_map__new(999999999);
	struct perf_map_entry e;
	struct perf_map_stats st;

	(void)state;
	feed(pm, "7fc478006980 130 JS:^leaf /tmp/a.js:3:14\n"
		 "0x7fc478006ac0 5c JS:*middle /tmp/a.js:4:16\r\n"
		 "18c4000 300 Builtin:DeoptimizationEntry_Eager\n");
	assert_string_equal(name_at(pm, 0x7fc478006980), "JS:^leaf /tmp/a.js:3:14");
	assert_string_equal(name_at(pm, 0x7fc478006aaf), "JS:^leaf /tmp/a.js:3:14");
	assert_null(name_at(pm, 0x7fc478006ab0));
	assert_string_equal(name_at(pm, 0x7fc478006b1b), "JS:*middle /tmp/a.js:4:16");
	assert_null(name_at(pm, 0x7fc478006b1c));
	assert_string_equal(name_at(pm, 0x18c42ff), "Builtin:DeoptimizationEntry_Eager");
	/* Code made again over part of the first line's range: its line wins there. */
	feed(pm, "7fc478006a00 10 JS:*other /tmp/b.js:1:1\n");
	assert_string_equal(name_at(pm, 0x7fc478006a05), "JS:*other /tmp/b.js:1:1");
	assert_string_equal(name_at(pm, 0x7fc478006a10), "JS:^leaf /tmp/a.js:3:14");
	assert_int_equal(perf_map__lookup(pm, 0x7fc478006a05, UINT64_MAX, &e), 0);
	assert_int_equal(e.id, 3);
	assert_int_equal(e.start, 0x7fc478006a00);
	assert_int_equal(e.end, 0x7fc478006a10);
	assert_int_equal(perf_map__entry(pm, 0, &e), 0);
	assert_int_equal(e.end, 0x7fc478006980 + 0x130);
	assert_int_equal(perf_map__entry(pm, 4, &e), -ENOENT);
	perf_map__stats(pm, &st);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.bad_lines, 0);
	perf_map__free(pm);
}

static void hostile_lines(void **state)
{
	struct perf_map *pm = perf_map__new(999999999);
	struct perf_map_stats st;
	char *longline = malloc(PERF_MAP_LINE + 64);
	size_t n;

	(void)state;
	feed(pm, "zz 10 bad start\n"
		 "1000 0 empty range\n"
		 "1000 10\n"			/* no name */
		 "1000 10 \n"			/* a blank one */
		 "ffffffffffffffff 10 wraps\n"
		 "12345678901234567 10 too many digits\n"
		 "1000\n"
		 "\n"
		 "2000 10 tab\tand\x01" "bell\x7f\n");
	perf_map__stats(pm, &st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.bad_lines, 8);
	assert_string_equal(name_at(pm, 0x2000), "tab?and?bell?");
	assert_null(name_at(pm, 0x1000));

	/* A line longer than PERF_MAP_LINE, in two reads: skipped to its end. */
	memset(longline, 'x', PERF_MAP_LINE + 64);
	memcpy(longline, "3000 10 ", 8);
	assert_int_equal(perf_map__feed(pm, longline, PERF_MAP_LINE + 64), PERF_MAP_LINE + 64);
	feed(pm, "xxxx\n4000 10 after\n");
	assert_null(name_at(pm, 0x3000));
	assert_string_equal(name_at(pm, 0x4000), "after");
	/* ... and whole in one read. */
	longline[PERF_MAP_LINE + 63] = '\n';
	assert_int_equal(perf_map__feed(pm, longline, PERF_MAP_LINE + 64), PERF_MAP_LINE + 64);
	assert_null(name_at(pm, 0x3000));
	perf_map__stats(pm, &st);
	assert_int_equal(st.bad_lines, 10);

	/* A line not yet whole is left for the next read. */
	n = perf_map__feed(pm, "5000 10 done\n6000 10 half", 25);
	assert_int_equal(n, 13);
	assert_null(name_at(pm, 0x6000));
	feed(pm, "6000 10 half-written\n");
	assert_string_equal(name_at(pm, 0x6000), "half-written");
	free(longline);
	perf_map__free(pm);
}

/*
 * Thousands of random ranges, many overlapping, fed in pieces (so that
 * some are swept into segments and some are still pending): every address
 * is named by the newest line holding it, as a search of every line says.
 */
static void random_overlaps(void **state)
{
	enum { LINES = 3000, SPAN = 1 << 16 };
	struct perf_map *pm = perf_map__new(999999999);
	static uint64_t start[LINES], size[LINES];
	char line[64];

	(void)state;
	srand(26);
	for (int i = 0; i < LINES; i++) {
		start[i] = 0x100000 + (uint64_t)(rand() % SPAN);
		size[i] = 1 + (uint64_t)(rand() % (i % 10 ? 64 : 4096));
		snprintf(line, sizeof(line), "%llx %llx f%d\n", (unsigned long long)start[i],
			 (unsigned long long)size[i], i);
		feed(pm, line);
	}
	for (uint64_t a = 0x100000 - 8; a < 0x100000 + SPAN + 4200; a += 3) {
		int want = -1;
		const char *got = name_at(pm, a);

		for (int i = LINES; i-- > 0;) {
			if (a >= start[i] && a < start[i] + size[i]) {
				want = i;
				break;
			}
		}
		if (want < 0) {
			assert_null(got);
		} else {
			snprintf(line, sizeof(line), "f%d", want);
			assert_non_null(got);
			assert_string_equal(got, line);
		}
	}
	perf_map__free(pm);
}

/* This process's own /tmp/perf-PID.map, as a JIT compiler would write it. */
static void the_file(void **state)
{
	char path[64], link[64];
	struct perf_map_stats st;
	struct perf_map_entry e;
	struct perf_map *pm;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
	pm = perf_map__new(getpid());
	assert_int_equal(perf_map__read(pm), -ENOENT);
	f = fopen(path, "w");
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	fputs("a000 100 first\nb000 10 sec", f);
	/* Not looked for again before the retry time ... */
	assert_null(name_at(pm, 0xa010));
	/* ... then found, and read; the half line waits. */
	assert_int_equal(perf_map__lookup(pm, 0xa010, 0, &e), 0);
	assert_string_equal(e.name, "first");
	assert_null(name_at(pm, 0xb000));
	/* Once open, read again as it grows, whatever the retry time. */
	fputs("ond\nc000 10 third\n", f);
	assert_string_equal(name_at(pm, 0xc000), "third");
	assert_string_equal(name_at(pm, 0xb000), "second");
	/* Made shorter: read from its start. */
	fclose(f);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("d000 10 new\n", f);
	fclose(f);
	assert_int_equal(perf_map__read(pm), 1);
	assert_null(name_at(pm, 0xa010));
	assert_string_equal(name_at(pm, 0xd000), "new");
	perf_map__stats(pm, &st);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.reads, 4);
	assert_int_equal(st.resets, 1);
	perf_map__free(pm);

	/* A symbolic link is not followed, wherever it points. */
	snprintf(link, sizeof(link), "/tmp/perf-%d.map.real", getpid());
	assert_int_equal(rename(path, link), 0);
	assert_int_equal(symlink(link, path), 0);
	pm = perf_map__new(getpid());
	assert_int_equal(perf_map__read(pm), -EPERM);
	assert_null(name_at(pm, 0xd000));
	perf_map__free(pm);
	unlink(path);
	unlink(link);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_and_newest_name),
		cmocka_unit_test(hostile_lines),
		cmocka_unit_test(random_overlaps),
		cmocka_unit_test(the_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

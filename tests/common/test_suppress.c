// SPDX-License-Identifier: MIT
/*
 * test_suppress.c - unit tests of LeakSanitizer-format suppressions
 * (user/common/suppress.c): the template match as LSan's TemplateMatch
 * (unanchored substring, `*`, `^`, `$`), a frame matched by function,
 * module, source file or inlined function, the file's grammar, and
 * the C runtime's built-in list on stacks as glibc makes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "msg.h"
#include "suppress.h"

static void test_template(void **state)
{
	static const struct { const char *pat, *text; bool match; } v[] = {
		{ "foo", "foo", true }, { "foo", "xfooy", true }, { "foo", "fo", false },
		{ "^foo", "foobar", true }, { "^foo", "xfoo", false },
		{ "foo$", "xfoo", true }, { "foo$", "foox", false },
		{ "^foo$", "foo", true }, { "^foo$", "foo2", false },
		{ "a*c", "xabbbcx", true }, { "^a*c$", "abbbcx", false },
		{ "^a*c$", "abbbc", true }, { "*", "", true }, { "^*$", "anything", true },
		{ "libfoo.so", "/usr/lib/libfoo.so.1", true },
		{ "^std::*::push_back", "std::vector<int>::push_back(int)", true },
		{ "a**b", "ab", true }, { "ab*", "a", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (suppress__template_match(v[i].pat, v[i].text) != v[i].match)
			fail_msg("'%s' against '%s': want %d", v[i].pat, v[i].text, v[i].match);
	}
	assert_false(suppress__template_match("foo", NULL));
}

/* A suppressions file of @text, loaded; NULL if refused. */
static struct suppress *load(const char *text)
{
	char path[] = "/tmp/test_suppress.XXXXXX";
	int fd = mkstemp(path);
	struct suppress *s;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	s = suppress__load(path);
	unlink(path);
	return s;
}

static void test_frames(void **state)
{
	struct suppress *s = load("# comment\n\n  leak:^leak_fn$\t\nleak:libbar.so\r\n"
				  "leak:src/pool.c\nleak:inlined_one\n");
	struct sym_frame f = { .status = SYM_OK, .func = "leak_fn", .module = "/bin/x",
			       .file = "src/x.c", .line = 3 };

	(void)state;
	assert_non_null(s);
	assert_int_equal(suppress__count(s), 4);
	assert_string_equal(suppress__pattern(s, 1), "libbar.so");
	assert_int_equal(suppress__match(s, &f), 0);
	f.func = "leak_fn2";
	assert_int_equal(suppress__match(s, &f), -1);
	f.module = "/usr/lib/libbar.so.2";
	assert_int_equal(suppress__match(s, &f), 1);
	f.module = "/bin/x";
	f.file = "/build/src/pool.c";
	assert_int_equal(suppress__match(s, &f), 2);
	f.file = NULL;
	f.ninline = 1;
	f.inl[0] = (struct sym_inline){ "inlined_one", "h.h", 1 };
	assert_int_equal(suppress__match(s, &f), 3);
	/* An unnamed frame's function is not matched (there is none). */
	f = (struct sym_frame){ .status = SYM_NO_SYMBOL, .func = "leak_fn" };
	assert_int_equal(suppress__match(s, &f), -1);
	suppress__free(s);
}

/* A stack's frames named from a table: frame k is frames[k]. */
struct fake {
	const char *func, *module;
};

static void fake_lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	const struct fake *v = ctx;

	(void)pid;
	*f = (struct sym_frame){ .status = v[addr].func ? SYM_OK : SYM_NO_SYMBOL,
				 .func = v[addr].func, .module = v[addr].module };
}

/* What the C runtime's list says of stack @v (@n frames): its kind, or NULL. */
static const char *runtime_what(const struct fake *v, uint32_t n)
{
	const struct suppress *rt = suppress__runtime();
	struct stack *st = calloc(1, sizeof(*st) + n * sizeof(*st->frames));

	assert_non_null(st);
	st->depth = n;
	for (uint32_t k = 0; k < n; k++)
		st->frames[k] = k;
	int i = suppress__stack(rt, st, fake_lookup, (void *)v);

	free(st);
	return suppress__what(rt, i);
}

#define LIBC	"/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO	"/lib64/ld-linux-x86-64.so.2"
#define PROG	"/tmp/prog"

static void test_runtime(void **state)
{
	/* printf's stdout buffer, as glibc 2.36 allocates it. */
	static const struct fake stdio[] = {
		{ "_IO_file_doallocate", LIBC }, { "_IO_doallocbuf", LIBC },
		{ "_IO_file_overflow@@GLIBC_2.2.5", LIBC }, { "printf", LIBC },
		{ "main", PROG },
	};
	static const struct fake tls[] = {
		{ "allocate_dtv", LDSO }, { "_dl_allocate_tls", LDSO },
		{ "allocate_stack", LIBC }, { "pthread_create@@GLIBC_2.34", LIBC },
		{ "main", PROG },
	};
	static const struct fake dlopen_obj[] = {
		{ "_dl_new_object", LDSO }, { "_dl_map_object_from_fd", LDSO },
		{ "_dl_map_object", LDSO }, { "dl_open_worker_begin", LDSO },
		{ "_dl_catch_exception", LDSO }, { "dlopen_implementation", LIBC },
		{ "main", PROG },
	};
	static const struct fake locale[] = {
		{ "_nl_load_locale_from_archive", LIBC }, { "_nl_find_locale", LIBC },
		{ "setlocale", LIBC }, { "main", PROG },
	};
	static const struct fake tz[] = {
		{ "__tzfile_read", LIBC }, { "tzset_internal", LIBC }, { "localtime", LIBC },
		{ "main", PROG },
	};
	/* The program's own: malloc called from main, strdup's block, a file left open. */
	static const struct fake own[] = { { "main", PROG }, { "__libc_start_call_main", LIBC } };
	static const struct fake dup[] = { { "strdup", LIBC }, { "main", PROG } };
	static const struct fake fopen_leak[] = {
		{ "__fopen_internal", LIBC }, { "fopen@@GLIBC_2.2.5", LIBC }, { "main", PROG },
	};
	/* A constructor dlopen runs, leaking: its own frame is innermost. */
	static const struct fake ctor[] = {
		{ "plugin_init", "/tmp/libplugin.so" }, { "call_init", LDSO },
		{ "_dl_init", LDSO }, { "dl_open_worker", LDSO }, { "main", PROG },
	};
	/* The same names in the program's own code (a static program): its own. */
	static const struct fake static_prog[] = {
		{ "_IO_file_doallocate", PROG }, { "printf", PROG }, { "main", PROG },
	};
	/* An unnamed libc frame ends nothing: the next one is looked at. */
	static const struct fake unnamed[] = {
		{ NULL, LIBC }, { "_IO_doallocbuf", LIBC }, { "main", PROG },
	};
	struct suppress_tally t = { 0 };
	char text[160];

	(void)state;
	assert_string_equal(runtime_what(stdio, 5), "stdio buffer");
	assert_string_equal(runtime_what(tls, 5), "thread-local storage");
	assert_string_equal(runtime_what(dlopen_obj, 7), "dynamic loader");
	assert_string_equal(runtime_what(locale, 4), "locale");
	assert_string_equal(runtime_what(tz, 4), "time zone");
	assert_string_equal(runtime_what(unnamed, 3), "stdio buffer");
	assert_null(runtime_what(own, 2));
	assert_null(runtime_what(dup, 2));
	assert_null(runtime_what(fopen_leak, 3));
	assert_null(runtime_what(ctor, 5));
	assert_null(runtime_what(static_prog, 3));
	/* The C runtime's files, by name in any directory. */
	assert_true(suppress__runtime_module("/lib/x86_64-linux-gnu/libc.so.6"));
	assert_true(suppress__runtime_module("/lib/ld-linux-aarch64.so.1"));
	assert_true(suppress__runtime_module("libc-2.31.so"));
	assert_false(suppress__runtime_module("/usr/lib/libcrypt.so.1"));
	assert_false(suppress__runtime_module(NULL));
	/* The tally: kinds in the list's order, each once. */
	suppress__tally_add(&t, 0, 1024, 1);		/* _IO_file_doallocate */
	assert_string_equal(suppress__tally_text(&t, text, sizeof(text)),
			    "1.0 KiB (1024 bytes) in 1 allocation (stdio buffer)");
	for (int i = 0; i < (int)suppress__count(suppress__runtime()); i++)
		if (!strcmp(suppress__pattern(suppress__runtime(), i), "^_dl_"))
			suppress__tally_add(&t, i, 100, 2);
	suppress__tally_add(&t, 1, 1, 1);
	assert_string_equal(suppress__tally_text(&t, text, sizeof(text)),
			    "1.1 KiB (1125 bytes) in 4 allocations (stdio buffer, dynamic loader)");
}

static void test_grammar(void **state)
{
	(void)state;
	assert_null(load("leak:ok\nrace:foo\n"));	/* another sanitizer's type */
	assert_null(load("leak:\n"));			/* no pattern */
	assert_null(load("foo\n"));
	assert_null(suppress__load("/nonexistent/supp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_grammar),
	};

	msg_init("test_suppress");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

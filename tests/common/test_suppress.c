// SPDX-License-Identifier: MIT
/*
 * test_suppress.c - unit tests of LeakSanitizer-format suppressions
 * (user/common/suppress.c): the template match as LSan's TemplateMatch
 * (unanchored substring, `*`, `^`, `$`), a frame matched by function,
 * module, source file or inlined function, and the file's grammar.
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
		cmocka_unit_test(test_grammar),
	};

	msg_init("test_suppress");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_pyfind.c - unit tests of the tracer's CPython finder and resolver
 * (user/interp/) on real files and a real process:
 *   - pyfind on Debian's /usr/bin/python3.11 (and trixie's python3.13
 *     when a root has it): its version, layout, TSS key, PyCode_Type, its
 *     destructor, the eval loop and its .cold part, pymalloc's hook;
 *   - pyfind on 3.12 builds where they are (python-build-standalone's,
 *     clang's code the decoder does not know, no .symtab; pyenv's, GCC's):
 *     the TSS key at the table's offset, whichever the code says;
 *   - a build that hides its eval loop or its runtime state (a copy of
 *     python3.11 whose _PyEval_EvalFrameDefault, or _PyRuntime, is
 *     renamed in .dynstr): refused, the message naming the symbol, where
 *     it is looked for and what to do;
 *   - 3.14, free-threaded 3.14 and 3.13 where given (HS_PY314, HS_PY314T,
 *     HS_PY313T): the layout read from _Py_DebugOffsets is what each
 *     version's headers say (a table, a row per build);
 *   - libctsd on this machine's glibc, checked against glibc itself: a
 *     key's value set with pthread_setspecific() is where the offsets say,
 *     from this thread's thread pointer;
 *   - pycache on a running python3.11 (PYTHONMALLOC=malloc): code objects
 *     by address named as CPython names them, each code unit's line as
 *     co_lines() gives it; an address that holds something else is "gone",
 *     never named; a death's last look ahead wins over the memory; after
 *     an exec ahead, nothing is read.
 *
 *   test_pyfind [PYTHON313|- [PY312...]]    (cmocka; PYTHON313: a python3.13
 *   binary, -: none; PY312: a python3.12 or a libpython3.12.so)
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>

#include "heapsnoop/interpframe.h"
#include "interp/python/libctsd.h"
#include "interp/python/pycache.h"
#include "interp/python/pyfind.h"
#include "interp/python/pylines.h"

#define PY311 "/usr/bin/python3.11"

static const char *py313;
static char **py312;
static int npy312;

static void check_image(const char *path, uint32_t minor)
{
	struct py_image img;
	char why[256];

	assert_int_equal(py_image__read(path, &img, why, sizeof(why)), 0);
	assert_int_equal(PY_MINOR_OF(img.version), minor);
	assert_false(img.pie);	/* Debian's python3.x: non-PIE, libpython linked in */
	assert_true(img.runtime && img.runtime_size > 100000);
	assert_true(img.tss_key >= img.runtime && img.tss_key < img.runtime + img.runtime_size);
	assert_int_equal(img.tss_key - img.runtime, img.layout.rt_tss_key);
	assert_true(img.code_type && img.code_dealloc && img.code_dealloc_off);
	/* The eval loop and its .cold part, apart from it, in the code. */
	assert_true(img.neval >= 2);
	for (int i = 1; i < img.neval; i++) {
		assert_true(img.eval[i].start < img.eval[i].end);
		assert_true(img.eval[i].end <= img.eval[0].start || img.eval[i].start >= img.eval[0].end);
	}
	assert_true(py_image__in_eval(&img, img.eval[0].start));
	assert_false(py_image__in_eval(&img, img.eval[0].end));
	assert_true(py_image__in_eval(&img, img.eval[1].end - 1));
	assert_true(img.obj_hook && img.pymalloc);
	print_message("%s: 3.%u, _PyRuntime %#llx, TSS key +%#llx, eval [%#llx, %#llx) and %d more "
		      "(.cold [%#llx, %#llx)), code_dealloc %#llx\n", path, minor & 0xff,
		      (unsigned long long)img.runtime, (unsigned long long)(img.tss_key - img.runtime),
		      (unsigned long long)img.eval[0].start, (unsigned long long)img.eval[0].end,
		      img.neval - 1, (unsigned long long)img.eval[1].start,
		      (unsigned long long)img.eval[1].end, (unsigned long long)img.code_dealloc);
}

static void test_python311(void **state)
{
	(void)state;
	check_image(PY311, 0x030b);
}

static void test_python313(void **state)
{
	struct py_image img;

	(void)state;
	if (!py313) {
		print_message("no python3.13 given: skipped\n");
		return;
	}
	check_image(py313, 0x030d);
	assert_int_equal(py_image__read(py313, &img, (char[64]){ 0 }, 64), 0);
	assert_true(img.debug_offsets);
	assert_int_equal(img.layout.ts_frame, 72);
}

/* 3.12: the TSS key at the table's offset, by the code (GCC) or not (clang). */
static void test_python312(void **state)
{
	(void)state;
	if (!npy312)
		print_message("no python3.12 given: skipped\n");
	for (int i = 0; i < npy312; i++) {
		struct py_image img;
		char why[512] = "";

		if (py_image__read(py312[i], &img, why, sizeof(why)))
			fail_msg("%s: %s", py312[i], why);
		assert_int_equal(PY_MINOR_OF(img.version), 0x030c);
		assert_int_equal(img.tss_key - img.runtime, 1544);
		assert_true(img.code_type && img.code_dealloc && img.code_dealloc_off);
		assert_true(img.neval >= 1 && img.eval[0].start < img.eval[0].end);
		print_message("%s: 3.12, _PyRuntime %#llx (%llu bytes), TSS key +1544, eval "
			      "[%#llx, %#llx) and %d more, pymalloc's hook %s\n", py312[i],
			      (unsigned long long)img.runtime, (unsigned long long)img.runtime_size,
			      (unsigned long long)img.eval[0].start,
			      (unsigned long long)img.eval[0].end, img.neval - 1,
			      img.obj_hook ? "found" : "not found");
	}
}

/*
 * The builds whose layout comes from their _Py_DebugOffsets, each checked
 * against its own version's headers (offsetof() with and without
 * Py_GIL_DISABLED), the TSS key's offset the table's: 3.14 (HS_PY314:
 * forky's python3.14), free-threaded 3.14 and 3.13 (HS_PY314T, HS_PY313T:
 * tests/tracer/make-python.sh's --disable-gil builds of 3.14.7, 3.13.5).
 * Each field of struct py_layout (all 32-bit) by its offset in it.
 */
struct want_field {
	const char *name;
	size_t off;
	int32_t value;
};
#define WANT(f, v) { #f, offsetof(struct py_layout, f), v }

static const struct want_build {
	const char *env;	/* the variable that names its binary */
	const char *name;
	uint32_t minor;
	bool free_threaded;
	uint64_t tss_key;	/* its offset in _PyRuntime */
	struct want_field f[20];	/* up to the first without a name */
} want_builds[] = {
	{ "HS_PY314", "3.14", 0x030e, false, 2336, {
		WANT(ts_frame, 72), WANT(fr_previous, 8), WANT(fr_code, 0), WANT(fr_instr, 56),
		WANT(fr_owner, 74), WANT(fr_tlbc, -1), WANT(co_tlbc, -1), WANT(co_filename, 112),
		WANT(co_firstlineno, 68), WANT(co_code, 208), WANT(co_firsttraceable, 192),
		WANT(ob_type, 8), WANT(tp_dealloc, 48), WANT(str_ascii, 40), WANT(str_compact, 56),
		WANT(str_state_shift, 0) } },
	{ "HS_PY314T", "3.14t", 0x030e, true, 2336, {
		WANT(ts_frame, 72), WANT(fr_previous, 8), WANT(fr_code, 0), WANT(fr_instr, 56),
		WANT(fr_owner, 78), WANT(fr_tlbc, 72), WANT(co_tlbc, 224), WANT(co_filename, 128),
		WANT(co_firstlineno, 84), WANT(co_code, 232), WANT(co_firsttraceable, 208),
		WANT(ob_type, 24), WANT(tp_dealloc, 64), WANT(str_ascii, 56), WANT(str_compact, 72),
		WANT(str_state_shift, 6) } },
	{ "HS_PY313T", "3.13t", 0x030d, true, 2160, {
		WANT(ts_frame, 72), WANT(fr_owner, 70), WANT(fr_code_tag, 0), WANT(fr_tlbc, -1),
		WANT(co_filename, 128), WANT(co_firstlineno, 84), WANT(co_code, 216),
		WANT(co_firsttraceable, 200), WANT(ob_type, 24), WANT(tp_dealloc, 64),
		WANT(str_ascii, 56), WANT(str_compact, 72), WANT(str_state_shift, 0) } },
};

static void check_build(const struct want_build *w, const char *path)
{
	struct py_image img;
	char why[512] = "";

	if (py_image__read(path, &img, why, sizeof(why)))
		fail_msg("%s: %s", path, why);
	assert_int_equal(PY_MINOR_OF(img.version), w->minor);
	assert_true(img.debug_offsets);
	assert_int_equal(img.layout.free_threaded, w->free_threaded);
	assert_int_equal(img.tss_key - img.runtime, w->tss_key);
	for (const struct want_field *f = w->f; f->name; f++) {
		int32_t v;

		memcpy(&v, (const char *)&img.layout + f->off, sizeof(v));
		if (v != f->value)
			fail_msg("%s (%s): %s is %d, its headers say %d", path, w->name, f->name, v,
				 f->value);
	}
	assert_true(img.code_type && img.code_dealloc && img.code_dealloc_off);
	assert_true(img.neval >= 1 && img.eval[0].start < img.eval[0].end);
	print_message("%s: %s, _PyRuntime %#llx (%llu bytes), TSS key +%llu, eval [%#llx, %#llx) "
		      "and %d more\n", path, w->name, (unsigned long long)img.runtime,
		      (unsigned long long)img.runtime_size, (unsigned long long)w->tss_key,
		      (unsigned long long)img.eval[0].start, (unsigned long long)img.eval[0].end,
		      img.neval - 1);
	for (int i = 1; i < img.neval; i++)
		print_message("  .cold [%#llx, %#llx)\n", (unsigned long long)img.eval[i].start,
			      (unsigned long long)img.eval[i].end);
}

static void test_debug_offsets_builds(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(want_builds) / sizeof(want_builds[0]); i++) {
		const char *path = getenv(want_builds[i].env);

		if (path && *path)
			check_build(&want_builds[i], path);
		else
			print_message("no python%s given (%s): skipped\n", want_builds[i].name,
				      want_builds[i].env);
	}
}

/* @from copied to @to with @name's first letter changed in its .dynstr. */
static void copy_renaming(const char *from, const char *to, const char *name)
{
	size_t want = strlen(name) + 1;
	GElf_Shdr sh, dyn = { 0 };
	Elf_Scn *scn = NULL;
	FILE *f = fopen(from, "rb");
	unsigned char *b;
	size_t shstr, n;
	long len;
	Elf *elf;
	int fd;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	b = malloc((size_t)len);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)b, (size_t)len);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstr), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && !strcmp(elf_strptr(elf, shstr, sh.sh_name), ".dynstr"))
			dyn = sh;
	elf_end(elf);
	assert_true(dyn.sh_size > want);
	for (n = dyn.sh_offset; n + want <= dyn.sh_offset + dyn.sh_size; n++)
		if (!memcmp(b + n, name, want) && b[n - 1] == '\0')
			break;
	assert_true(n + want <= dyn.sh_offset + dyn.sh_size);
	b[n] = 'X';
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, (size_t)len), len);
	close(fd);
	free(b);
}

/*
 * A build that hides what the finder needs (a copy of python3.11 with the
 * symbol renamed in its .dynstr): refused, and the message names the
 * symbol, where it was looked for and what to do, a row per symbol.
 */
static const struct hidden {
	const char *symbol;
	const char *said[4];	/* up to the first NULL: each in the message */
} hiddens[] = {
	{ "_PyEval_EvalFrameDefault", { "no _PyEval_EvalFrameDefault", "(.dynsym)",
					"its Python frames need one that exports it", "--no-interp" } },
	{ "_PyRuntime", { "no _PyRuntime symbol in .dynsym or .symtab",
			  "its Python frames need one that exports it" } },
};

static void test_hidden(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hiddens) / sizeof(hiddens[0]); i++) {
		char path[] = "/tmp/test_pyfind.XXXXXX", why[512] = "";
		struct py_image img;
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		close(fd);
		copy_renaming(PY311, path, hiddens[i].symbol);
		assert_int_equal(py_image__read(path, &img, why, sizeof(why)), -ENOTSUP);
		unlink(path);
		print_message("%s hidden: %s\n", hiddens[i].symbol, why);
		for (int k = 0; k < 4 && hiddens[i].said[k]; k++)
			if (!strstr(why, hiddens[i].said[k]))
				fail_msg("%s hidden: \"%s\" not said", hiddens[i].symbol,
					 hiddens[i].said[k]);
	}
}

static void test_not_python(void **state)
{
	struct py_image img;
	char why[256];

	(void)state;
	assert_int_equal(py_image__read("/bin/true", &img, why, sizeof(why)), -ENOENT);
}

/* glibc's own pthread_setspecific() value, where libctsd says it is. */
static void test_libc_tsd(void **state)
{
	struct libc_tsd t;
	pthread_key_t keys[40];
	uint64_t tp, slot, block;
	int marker[40];

	(void)state;
	assert_int_equal(libc_tsd__read("/lib/x86_64-linux-gnu/libc.so.6", &t), 0);
	__asm__("mov %%fs:0, %0" : "=r"(tp));	/* x86-64: the TCB's self pointer is the thread pointer */
	/* Keys below 32 in the first block, and past it through specific[]. */
	for (int i = 0; i < 40; i++) {
		assert_int_equal(pthread_key_create(&keys[i], NULL), 0);
		assert_int_equal(pthread_setspecific(keys[i], &marker[i]), 0);
	}
	for (int i = 0; i < 40; i++) {
		unsigned int k = keys[i];

		if (k < 32) {
			slot = tp + (uint64_t)t.first + (uint64_t)k * t.entry + t.data;
		} else {
			block = *(uint64_t *)(tp + (uint64_t)t.second + (k / 32) * 8);
			slot = block + (uint64_t)(k % 32) * t.entry + t.data;
		}
		assert_ptr_equal(*(void **)slot, &marker[i]);
	}
	for (int i = 0; i < 40; i++)
		pthread_key_delete(keys[i]);
}

/* --- a running python3.11 ------------------------------------------------ */

static const char *SCRIPT =
	"import sys\n"
	"def f(a):\n"
	"    b = a + 1\n"
	"    return [b,\n"
	"            a]\n"
	"class K:\n"
	"    def m(self):\n"
	"        return 1\n"
	"def caf\u00e9():\n"
	"    pass\n"
	"def \u65e5\u672c():\n"
	"    pass\n"
	"for co in (f.__code__, K.m.__code__, caf\u00e9.__code__, \u65e5\u672c.__code__):\n"
	"    print('code', id(co), co.co_firstlineno, co.co_qualname, co.co_filename, flush=True)\n"
	"    for s, e, l in co.co_lines():\n"
	"        print('lines', s // 2, e // 2, -1 if l is None else l, flush=True)\n"
	"print('other', id([]), flush=True)\n"
	"print('end', flush=True)\n"
	"sys.stdin.readline()\n";

static pid_t child;
static FILE *from_child;
static int to_child;
static struct py_image img311;

static int start_python(void **state)
{
	int in[2], out[2];
	char why[256];

	(void)state;
	if (py_image__read(PY311, &img311, why, sizeof(why)) || pipe(in) || pipe(out))
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (!child) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		setenv("PYTHONMALLOC", "malloc", 1);
		execl(PY311, PY311, "-c", SCRIPT, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_child = in[1];
	from_child = fdopen(out[0], "r");
	return from_child ? 0 : -1;
}

static int stop_python(void **state)
{
	(void)state;
	if (to_child >= 0)
		close(to_child);
	if (from_child)
		fclose(from_child);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}

/* What the ahead function answers (set by each case). */
static struct {
	const struct hs_interp_code *look;
	size_t len;
	bool live;
	uint64_t addr;
} fake_ahead = { .live = true };

static const struct hs_interp_code *ahead(void *ctx, pid_t pid, uint64_t addr, uint64_t pos,
					  size_t *len, bool *live)
{
	(void)ctx; (void)pid; (void)pos;
	*live = fake_ahead.live;
	if (!fake_ahead.look || addr != fake_ahead.addr)
		return NULL;
	*len = fake_ahead.len;
	return fake_ahead.look;
}

static void test_names_and_lines(void **state)
{
	struct py_cache *c;
	char line[8192], name[256], file[256];
	unsigned long long addr = 0, other = 0;
	int first = 0, codes = 0, units = 0;

	(void)state;
	c = py_cache__new(child, &img311.layout, img311.code_type, ahead, NULL);
	assert_non_null(c);
	while (fgets(line, sizeof(line), from_child) && strncmp(line, "end", 3)) {
		int s, e, l;

		if (sscanf(line, "code %llu %d %255s %255s", &addr, &first, name, file) == 4) {
			struct py_frame_name fn;

			py_cache__name(c, addr, 0, 0, &fn);
			assert_false(fn.gone);
			assert_string_equal(fn.name, name);
			assert_string_equal(fn.file, file);
			codes++;
		} else if (sscanf(line, "lines %d %d %d", &s, &e, &l) == 3) {
			for (int u = s; u < e; u++) {
				struct py_frame_name fn;

				py_cache__name(c, addr, u, 0, &fn);
				assert_false(fn.gone);
				if (!fn.incomplete)
					assert_int_equal(fn.line, l < 0 ? 0 : l);
				units++;
			}
		} else if (sscanf(line, "other %llu", &other) == 1) {
			struct py_frame_name fn;

			/* A list, not a code object: gone, never named. */
			py_cache__name(c, other, 0, 0, &fn);
			assert_true(fn.gone);
			assert_string_equal(fn.name, "<code gone>");
		}
	}
	/* ASCII, Latin-1 (café) and UCS-2 (日本) names */
	assert_int_equal(codes, 4);
	assert_true(units > 10);
	print_message("pid %d: 4 code objects named, %d code units' lines as co_lines() says\n",
		      child, units);
	py_cache__free(c);
}

/* A death ahead names the frame, not the memory; an exec ahead stops reads. */
static void test_death_and_exec_ahead(void **state)
{
	static unsigned char buf[sizeof(struct hs_interp_code) + 16];
	struct hs_interp_code *look = (struct hs_interp_code *)buf;
	struct py_frame_name fn;
	struct py_cache *c;

	(void)state;
	c = py_cache__new(child, &img311.layout, img311.code_type, ahead, NULL);
	assert_non_null(c);
	memset(buf, 0, sizeof(buf));
	look->firstline = 40;
	look->aux = 0;
	memcpy(look->name, "dead_fn", 7);
	look->name_len = 7;
	look->name_kind = 1;
	memcpy(look->file, "dead.py", 7);
	look->file_len = 7;
	look->file_kind = 1;
	/* kind 13 (no columns), 4 units, line +2 */
	look->table[0] = 0x80 | 13 << 3 | 3;
	look->table[1] = 4;
	look->table_len = 2;
	look->table_want = 2;
	fake_ahead.look = look;
	fake_ahead.len = sizeof(buf);
	fake_ahead.addr = img311.code_type;	/* any address: the look wins */
	py_cache__name(c, img311.code_type, 1, 0, &fn);
	assert_false(fn.gone);
	assert_string_equal(fn.name, "dead_fn");
	assert_string_equal(fn.file, "dead.py");
	assert_int_equal(fn.line, 42);
	/* Its death handled: the address is read again (PyCode_Type is no code object). */
	fake_ahead.look = NULL;
	py_cache__gone(c, img311.code_type);
	py_cache__name(c, img311.code_type, 1, 0, &fn);
	assert_true(fn.gone);
	/* An exec ahead: nothing read, even a real code object's address. */
	py_cache__gone(c, img311.code_type);
	fake_ahead.live = false;
	py_cache__name(c, img311.runtime, 0, 0, &fn);
	assert_true(fn.gone);
	fake_ahead.live = true;
	py_cache__free(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest files[] = {
		cmocka_unit_test(test_python311),
		cmocka_unit_test(test_python313),
		cmocka_unit_test(test_python312),
		cmocka_unit_test(test_debug_offsets_builds),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_libc_tsd),
	};
	const struct CMUnitTest live[] = {
		cmocka_unit_test(test_names_and_lines),
		cmocka_unit_test(test_death_and_exec_ahead),
	};

	py313 = argc > 1 && strcmp(argv[1], "-") ? argv[1] : NULL;
	py312 = argv + 2;
	npy312 = argc > 2 ? argc - 2 : 0;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(files, NULL, NULL) |
	       cmocka_run_group_tests(live, start_python, stop_python);
}

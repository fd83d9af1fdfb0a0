// SPDX-License-Identifier: MIT
/*
 * test_pydecode_arm64.c - unit tests of the arm64 decoders of CPython's
 * and LuaJIT's code (user/interp/python/pydecode_arm64.c, ljdecode_arm64.c),
 * run on any machine (capstone decodes every architecture): the
 * instruction words of Debian's arm64 builds at their own addresses, with
 * the answers objdump and a live run in the arm64 guest agree on
 * (tests/arm64/), and shapes that must not be taken.
 *   python3.11 3.11.2-6+deb12u9 (bookworm), python3.13 3.13.5-2+deb13u5
 *   (trixie): PyGILState_GetThisThreadState, PyObject_Malloc;
 *   libluajit-5.1-2 2.1.0~beta3+git20220320 (bookworm), luajit
 *   2.1.0+openresty20250117-2 (trixie): lua_newstate's two pieces, the
 *   words between them nops.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "interp/luajit/ljdecode.h"
#include "interp/python/pydecode.h"

#define NOP 0xd503201fu

/* @n words at @addr into little-endian bytes. */
static size_t code_of(uint8_t *out, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 4; b++)
			out[4 * i + b] = (uint8_t)(w[i] >> (8 * b));
	return 4 * n;
}

static void test_tss_key(void **state)
{
	/* 3.11: _PyRuntime 0xa35ff8; ldr w0, [x0, #612]: autoTSSkey at +608 on arm64. */
	static const uint32_t py311[] = {
		0x90002e20, 0x913fe000, 0xf9412c01, 0xb4000061,
		0xb9426400, 0x17feb9aa, 0xd2800000, 0xd65f03c0,
	};
	/* 3.13: bti c first; _PyRuntime 0xa27698, the key at +2164 (+2160: the table's). */
	static const uint32_t py313[] = {
		0xd503245f, 0x90002d40, 0x911a6000, 0xb9487001,
		0x34000061, 0xb9487400, 0x17fe8556, 0xd2800000,
		0xd65f03c0,
	};
	/* adrp x0; ldr x0, [x0, #16] (a GOT slot); add x0, x0, #0x870; b: via the slot. */
	static const uint32_t got[] = { 0x90000000, 0xf9400800, 0x9121c000, 0x14000010 };
	/* ldr x0, [x0, #608] (8 bytes, not the key's 4), then b: no shape. */
	static const uint32_t wide[] = { 0x90002e20, 0x913fe000, 0xf9413000, 0x14000010 };
	/* ret before any call: no shape. */
	static const uint32_t ret[] = { 0x90002e20, 0x913fe000, 0xd65f03c0, 0xb9426400 };
	struct pydecode_key k;
	uint8_t c[64];

	(void)state;
	assert_int_equal(pydecode__tss_key(c, code_of(c, py311, 8), 0x4714a4, &k), 0);
	assert_false(k.via_slot);
	assert_int_equal(k.addr, 0xa35ff8 + 612);
	assert_int_equal(pydecode__tss_key(c, code_of(c, py313, 9), 0x47f420, &k), 0);
	assert_false(k.via_slot);
	assert_int_equal(k.addr, 0xa27698 + 2164);
	assert_int_equal(pydecode__tss_key(c, code_of(c, got, 4), 0x10000, &k), 0);
	assert_true(k.via_slot);
	assert_int_equal(k.addr, 0x10000 + 16);
	assert_int_equal(k.off, 0x870);
	assert_int_equal(pydecode__tss_key(c, code_of(c, wide, 4), 0x4714a4, &k), -ENOENT);
	assert_int_equal(pydecode__tss_key(c, code_of(c, ret, 4), 0x4714a4, &k), -ENOENT);
}

static void test_malloc_hook(void **state)
{
	/* 3.11: ldp x0, x3, [&_PyObject]; cmp x3, x2 (pymalloc's 0x4756c0). */
	static const uint32_t py311[] = {
		0xb7f80960, 0xaa0003e1, 0x900025e0, 0x91048003,
		0x90000002, 0x911b0042, 0xa9400c60, 0xeb02007f,
		0x540007a1, 0xa9be7bfd,
	};
	/* 3.13: bti, tbnz, paciasp, a frame; ldr x2, [_PyRuntime, #792]; cmp x2, x0. */
	static const uint32_t py313[] = {
		0xd503245f, 0xb7f80ae0, 0xd503233f, 0xa9bd7bfd,
		0x910003fd, 0xa90153f3, 0xf0002d14, 0x911a6294,
		0xaa0003f3, 0x90000000, 0x9127a000, 0xf9418e82,
		0xeb00005f, 0x54000801,
	};
	uint64_t hook, pymalloc;
	uint8_t c[64];

	(void)state;
	assert_int_equal(pydecode__malloc_hook(c, code_of(c, py311, 10), 0x475584, &hook, &pymalloc), 0);
	assert_int_equal(hook, 0x931120 + 8);
	assert_int_equal(pymalloc, 0x4756c0);
	assert_int_equal(pydecode__malloc_hook(c, code_of(c, py313, 14), 0x484880, &hook, &pymalloc), 0);
	assert_int_equal(hook, 0xa27698 + 792);
	assert_int_equal(pymalloc, 0x4849e8);
	/* Cut before the compare: nothing. */
	assert_int_equal(pydecode__malloc_hook(c, code_of(c, py313, 12), 0x484880, &hook, &pymalloc),
			 -ENOENT);
}

struct jumps {
	uint64_t t[8];
	int n;
};

static void got_jump(void *ctx, uint64_t target)
{
	struct jumps *j = ctx;

	if (j->n < 8)
		j->t[j->n++] = target;
}

static void test_jumps_out(void **state)
{
	/* 3.11's GetThisThreadState: cbz inside, b out to pthread_getspecific@plt. */
	static const uint32_t py311[] = {
		0x90002e20, 0x913fe000, 0xf9412c01, 0xb4000061,
		0xb9426400, 0x17feb9aa, 0xd2800000, 0xd65f03c0,
	};
	/* 3.13's PyObject_Malloc head: tbnz and b.ne out of these 56 bytes; bl not a jump. */
	static const uint32_t py313[] = {
		0xd503245f, 0xb7f80ae0, 0xd503233f, 0xa9bd7bfd,
		0x910003fd, 0xa90153f3, 0xf0002d14, 0x911a6294,
		0xaa0003f3, 0x90000000, 0x9127a000, 0xf9418e82,
		0xeb00005f, 0x54000801, 0x94000010,
	};
	struct jumps j = { 0 };
	uint8_t c[64];

	(void)state;
	assert_int_equal(pydecode__jumps_out(c, code_of(c, py311, 8), 0x4714a4, got_jump, &j), 1);
	assert_int_equal(j.t[0], 0x41fb60);
	j.n = 0;
	assert_int_equal(pydecode__jumps_out(c, code_of(c, py313, 15), 0x484880, got_jump, &j), 2);
	assert_int_equal(j.t[0], 0x4849e0);
	assert_int_equal(j.t[1], 0x4849b4);
}

/* lua_newstate's compare and call at @a, lj_alloc_f's adrp/add at @b, nops between. */
static size_t newstate(uint8_t *c, size_t cap, uint64_t base, uint64_t a, const uint32_t *wa,
		       size_t na, uint64_t b, const uint32_t *wb, size_t nb)
{
	size_t n = (size_t)(b - base) / 4 + nb;
	uint32_t w[1024];

	assert_true(n <= 1024 && 4 * n <= cap);
	for (size_t i = 0; i < n; i++)
		w[i] = NOP;
	memcpy(&w[(a - base) / 4], wa, na * 4);
	memcpy(&w[(b - base) / 4], wb, nb * 4);
	return code_of(c, w, n);
}

static void test_lj_allocf(void **state)
{
	static const uint32_t b12_cmp[] = {	/* at 0x53188 */
		0xd289aa00, 0xeb0002bf, 0x54000f20, 0xaa1703e0,
		0xd2830903, 0xd2800002, 0xd2800001, 0xd63f02a0,
	};
	static const uint32_t b12_lea[] = {	/* at 0x53474 */
		0x90fffe35, 0xd2a00400, 0x910982b5, 0xf9001700, 0x17ffff44,
	};
	static const uint32_t t13_cmp[] = {	/* at 0x546e8 */
		0xd289aa00, 0xeb0002bf, 0x540010c0, 0xaa1703e0,
		0xd2831103, 0xd2800002, 0xd2800001, 0xd63f02a0,
	};
	static const uint32_t t13_lea[] = {	/* at 0x549d8 */
		0x90fffe15, 0xd2a00400, 0x9120c2b5, 0xf9001700, 0xf9401bf8, 0x17ffff42,
	};
	static uint8_t c[4096];
	uint64_t allocf;
	uint32_t gg;
	size_t n;

	(void)state;
	n = newstate(c, sizeof(c), 0x53180, 0x53188, b12_cmp, 8, 0x53474, b12_lea, 5);
	assert_int_equal(ljdecode__allocf(c, n, 0x53180, &allocf, &gg), 0);
	assert_int_equal(allocf, 0x17260);
	assert_int_equal(gg, 6216);
	n = newstate(c, sizeof(c), 0x546e0, 0x546e8, t13_cmp, 8, 0x549d8, t13_lea, 6);
	assert_int_equal(ljdecode__allocf(c, n, 0x546e0, &allocf, &gg), 0);
	assert_int_equal(allocf, 0x14830);
	assert_int_equal(gg, 6280);
	/* Without the adrp/add into the compared register: no shape. */
	n = newstate(c, sizeof(c), 0x546e0, 0x546e8, t13_cmp, 8, 0x549d8, t13_lea, 1);
	assert_int_equal(ljdecode__allocf(c, n, 0x546e0, &allocf, &gg), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tss_key),
		cmocka_unit_test(test_malloc_hook),
		cmocka_unit_test(test_jumps_out),
		cmocka_unit_test(test_lj_allocf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

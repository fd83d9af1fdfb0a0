// SPDX-License-Identifier: MIT
/*
 * test_probesite_arm64.c - unit tests of arm64 probe placement
 * (user/tracer/arch/probesite_arm64.c), run on any machine (capstone
 * decodes every architecture): synthetic AArch64 prologues with known
 * answers, and Debian's arm64 glibc where multiarch installed it (its
 * allocator entry points' chosen sites must be simulated or the entry,
 * and never past an instruction that touches sp or x30).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "arch/probesite.h"
#include "maps/elffile.h"

#define X0 PS_ARG(0)
#define X1 PS_ARG(1)
#define X2 PS_ARG(2)

/* Little-endian instruction words into bytes. */
#define W(x) (uint8_t)(x), (uint8_t)((x) >> 8), (uint8_t)((x) >> 16), (uint8_t)((x) >> 24)
#define STP_FP_LR W(0xa9bc7bfdu)	/* stp x29, x30, [sp, #-64]! */
#define MOV_FP_SP W(0x910003fdu)	/* mov x29, sp */
#define PACIASP W(0xd503233fu)
#define BTI_C W(0xd503245fu)
#define NOP W(0xd503201fu)
#define ADRP_X1 W(0x900008a1u)		/* adrp x1, ... */
#define CBZ_X0 W(0xb4000880u)		/* cbz x0, +0x110 */
#define B_FWD W(0x14000010u)		/* b +0x40 */
#define BL_FWD W(0x94000010u)		/* bl +0x40 */
#define MOV_X3_X1 W(0xaa0103e3u)	/* mov x3, x1 */
#define MUL_X1 W(0x9b027c21u)		/* mul x1, x1, x2 */
#define STR_LR W(0xf90007feu)		/* str x30, [sp, #8] */
#define LDR_LIT W(0x58000080u)		/* ldr x0, +0x10 (literal) */

static struct probesite site(const uint8_t *code, size_t len, unsigned int args, int null_arg)
{
	struct probesite ps;

	assert_int_equal(probesite__find(code, len, 0x1000, args, null_arg, &ps), 0);
	return ps;
}

static void test_synthetic(void **state)
{
	static const uint8_t free_like[] = { CBZ_X0, STP_FP_LR };
	static const uint8_t frame_first[] = { STP_FP_LR, MOV_FP_SP, ADRP_X1 };
	static const uint8_t adrp_first[] = { ADRP_X1, STP_FP_LR };
	static const uint8_t mov_then_b[] = { MOV_X3_X1, B_FWD };
	static const uint8_t writes_arg[] = { MUL_X1, B_FWD };
	static const uint8_t saves_lr[] = { STR_LR, B_FWD };
	static const uint8_t pac_first[] = { PACIASP, B_FWD };
	static const uint8_t bti_then_adrp[] = { BTI_C, ADRP_X1 };
	static const uint8_t nop_then_ldr[] = { NOP, LDR_LIT };
	static const uint8_t bl_first[] = { BL_FWD, B_FWD };
	static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff };
	struct probesite ps;

	(void)state;
	/* glibc's free: cbz x0 is simulated, at the entry. */
	ps = site(free_like, sizeof(free_like), X0, 0);
	assert_int_equal(ps.offset, 0);
	assert_true(ps.emulated);
	/* stp x29, x30 reads x30 and moves sp: the entry, stepped. */
	ps = site(frame_first, sizeof(frame_first), X0, -1);
	assert_int_equal(ps.offset, 0);
	assert_false(ps.emulated);
	assert_non_null(strstr(ps.why, "x30"));
	ps = site(adrp_first, sizeof(adrp_first), X0, -1);
	assert_int_equal(ps.offset, 0);
	assert_true(ps.emulated);
	/* mov x3, x1 writes no argument the probe reads: the b after it. */
	ps = site(mov_then_b, sizeof(mov_then_b), X0 | X1, -1);
	assert_int_equal(ps.offset, 4);
	assert_true(ps.emulated);
	assert_string_equal(ps.insn, "b #0x1044");
	/* ... but it does if the probe reads x3. */
	ps = site(mov_then_b, sizeof(mov_then_b), X0 | X1 | PS_ARG(3), -1);
	assert_int_equal(ps.offset, 0);
	/* reallocarray's mul x1: the entry. */
	ps = site(writes_arg, sizeof(writes_arg), X0 | X1 | X2, -1);
	assert_int_equal(ps.offset, 0);
	assert_non_null(strstr(ps.why, "argument"));
	/* A stored x30 would keep the return address the uretprobe replaces. */
	ps = site(saves_lr, sizeof(saves_lr), X0, -1);
	assert_int_equal(ps.offset, 0);
	assert_non_null(strstr(ps.why, "x30"));
	/* paciasp signs x30 (capstone 4: "hint #0x19"): never past it. */
	ps = site(pac_first, sizeof(pac_first), X0, -1);
	assert_int_equal(ps.offset, 0);
	assert_false(ps.emulated);
	assert_non_null(strstr(ps.why, "pointer-authentication"));
	/* bti c and nop touch nothing: the simulated instruction after them. */
	ps = site(bti_then_adrp, sizeof(bti_then_adrp), X0, -1);
	assert_int_equal(ps.offset, 4);
	ps = site(nop_then_ldr, sizeof(nop_then_ldr), X1, -1);
	assert_int_equal(ps.offset, 4);
	assert_true(ps.emulated);
	/* bl writes x30: not a site, and nothing after it is. */
	ps = site(bl_first, sizeof(bl_first), X0, -1);
	assert_int_equal(ps.offset, 0);
	assert_false(ps.emulated);
	ps = site(junk, sizeof(junk), X0, -1);
	assert_int_equal(ps.offset, 0);
}

/* Debian's arm64 glibc (multiarch: scripts/install-deps.sh --arm64). */
static void test_real_glibc(void **state)
{
	static const struct {
		const char *sym;
		unsigned int args;
		int null_arg;
	} fns[] = {
		{ "malloc", X0, -1 },
		{ "calloc", X0 | X1, -1 },
		{ "realloc", X0 | X1, -1 },
		{ "reallocarray", X0 | X1 | X2, -1 },
		{ "posix_memalign", X0 | X1 | X2, -1 },
		{ "free", X0, 0 },
	};
	const char *libc = getenv("HS_TEST_LIBC_ARM64");
	struct elf_file *ef;

	(void)state;
	if (!libc)
		libc = "/usr/lib/aarch64-linux-gnu/libc.so.6";
	if (access(libc, R_OK)) {
		printf("  %s not installed (scripts/install-deps.sh --arm64)\n", libc);
		fail();
	}
	assert_int_equal(elf_file__open(libc, &ef), 0);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct elf_func fn;
		struct probesite ps;
		uint8_t code[96];
		ssize_t n;

		assert_int_equal(elf_file__find_func(ef, fns[i].sym, &fn), 0);
		n = elf_file__pread(ef, code, sizeof(code), fn.offset);
		assert_true(n > 16);
		ps = site(code, (size_t)n, fns[i].args, fns[i].null_arg);
		printf("  %-15s +%-2u %-28s %s\n", fns[i].sym, ps.offset, ps.insn, ps.why);
		/* A site past the entry is simulated, reached before any frame. */
		if (ps.offset) {
			assert_true(ps.emulated);
			assert_true(ps.offset < 64);
		}
	}
	/* free begins with its cbz x0: simulated at the entry. */
	{
		struct elf_func fn;
		struct probesite ps;
		uint8_t code[96];

		assert_int_equal(elf_file__find_func(ef, "free", &fn), 0);
		assert_true(elf_file__pread(ef, code, sizeof(code), fn.offset) > 16);
		ps = site(code, sizeof(code), X0, 0);
		assert_int_equal(ps.offset, 0);
		assert_true(ps.emulated);
	}
	elf_file__close(ef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_real_glibc),
	};

	return cmocka_run_group_tests_name("probesite_arm64", tests, NULL, NULL);
}

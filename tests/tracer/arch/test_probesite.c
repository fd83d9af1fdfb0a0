// SPDX-License-Identifier: MIT
/*
 * test_probesite.c - unit tests of x86-64 probe placement (user/tracer/arch/probesite_x86.c):
 * synthetic x86-64 prologues with known answers, and this machine's real
 * glibc, where every chosen site must be emulated and equivalent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/probesite.h"
#include "maps/elffile.h"

#define RDI PS_ARG(0)
#define RSI PS_ARG(1)
#define RDX PS_ARG(2)

static struct probesite site(const uint8_t *code, size_t len, unsigned int args, int null_arg)
{
	struct probesite ps;

	assert_int_equal(probesite__find(code, len, 0x1000, args, null_arg, &ps), 0);
	return ps;
}

static void test_synthetic(void **state)
{
	/* push %r12: emulated at the entry. */
	static const uint8_t push[] = { 0x41, 0x54, 0x55 };
	/* glibc free: test %rdi,%rdi; je rel32; push %rbp. */
	static const uint8_t free_like[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0, 1, 0, 0, 0x55 };
	/* posix_memalign: cmpb $0,0(%rip); push %r12. */
	static const uint8_t cmp_push[] = { 0x80, 0x3d, 0, 0, 0, 0, 0, 0x41, 0x54 };
	/* reallocarray: mov %rsi,%rax; mul %rdx (writes %rdx); mov %rax,%rsi. */
	static const uint8_t writes_arg[] = { 0x48, 0x89, 0xf0, 0x48, 0xf7, 0xe2, 0x48, 0x89, 0xc6, 0x55 };
	/* sub $0x18,%rsp; push %rbx: %rsp moves first. */
	static const uint8_t moves_sp[] = { 0x48, 0x83, 0xec, 0x18, 0x53 };
	/* mov %eax,%edi (writes the first argument's low half); push %rbp. */
	static const uint8_t writes_edi[] = { 0x89, 0xc7, 0x55 };
	/* ret */
	static const uint8_t ret[] = { 0xc3, 0x55 };
	/* jrcxz is not emulated by the kernel; then push. */
	static const uint8_t jrcxz[] = { 0xe3, 0x00, 0x55 };
	/* nop at the entry. */
	static const uint8_t nop[] = { 0x90, 0x55 };
	/* Not an instruction. */
	static const uint8_t junk[] = { 0x06, 0x06 };
	/* test %rsi,%rsi; je: a NULL test of an argument other than the one allowed. */
	static const uint8_t test_rsi[] = { 0x48, 0x85, 0xf6, 0x74, 0x05, 0x55 };
	struct probesite ps;

	(void)state;
	ps = site(push, sizeof(push), RDI, -1);
	assert_int_equal(ps.offset, 0);
	assert_true(ps.emulated);
	assert_string_equal(ps.insn, "pushq %r12");

	ps = site(free_like, sizeof(free_like), RDI, 0);
	assert_int_equal(ps.offset, 9);
	assert_true(ps.emulated);
	/* Without the NULL rule the je itself is the first emulated site. */
	ps = site(free_like, sizeof(free_like), RDI, -1);
	assert_int_equal(ps.offset, 3);

	ps = site(cmp_push, sizeof(cmp_push), RDI | RSI | RDX, -1);
	assert_int_equal(ps.offset, 7);
	assert_true(ps.emulated);

	ps = site(writes_arg, sizeof(writes_arg), RDI | RSI | RDX, -1);
	assert_int_equal(ps.offset, 0);
	assert_false(ps.emulated);
	assert_non_null(strstr(ps.why, "writes an argument register"));
	/* If %rdx is not read, the mul no longer matters, but mov %rax,%rsi does. */
	ps = site(writes_arg, sizeof(writes_arg), RDI, -1);
	assert_int_equal(ps.offset, 9);

	ps = site(moves_sp, sizeof(moves_sp), RDI, -1);
	assert_int_equal(ps.offset, 0);
	assert_non_null(strstr(ps.why, "moves %rsp"));

	ps = site(writes_edi, sizeof(writes_edi), RDI, -1);
	assert_int_equal(ps.offset, 0);
	ps = site(writes_edi, sizeof(writes_edi), RSI, -1);
	assert_int_equal(ps.offset, 2);

	ps = site(ret, sizeof(ret), RDI, -1);
	assert_int_equal(ps.offset, 0);
	assert_false(ps.emulated);

	ps = site(jrcxz, sizeof(jrcxz), RDI, -1);
	assert_int_equal(ps.offset, 0);
	assert_false(ps.emulated);

	ps = site(nop, sizeof(nop), RDI, -1);
	assert_int_equal(ps.offset, 0);
	assert_true(ps.emulated);

	ps = site(junk, sizeof(junk), RDI, -1);
	assert_int_equal(ps.offset, 0);

	/* The je is emulated, so it is the site; the NULL rule is not needed. */
	ps = site(test_rsi, sizeof(test_rsi), RDI | RSI, 0);
	assert_int_equal(ps.offset, 3);
}

/* This machine's glibc: the C library heapsnoop probes by default. */
static void test_real_glibc(void **state)
{
	static const struct {
		const char *sym;
		unsigned int args;
		int null_arg;
	} fns[] = {
		{ "malloc", RDI, -1 },
		{ "calloc", RDI | RSI, -1 },
		{ "realloc", RDI | RSI, -1 },
		{ "posix_memalign", RDI | RSI | RDX, -1 },
		{ "free", RDI, 0 },
	};
	const char *libc = getenv("HS_TEST_LIBC");
	struct elf_file *ef;

	(void)state;
	assert_int_equal(elf_file__open(libc ? libc : "/lib/x86_64-linux-gnu/libc.so.6", &ef), 0);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct elf_func fn;
		struct probesite ps, at;
		uint8_t code[96];
		ssize_t n;

		assert_int_equal(elf_file__find_func(ef, fns[i].sym, &fn), 0);
		n = elf_file__pread(ef, code, sizeof(code), fn.offset);
		assert_true(n > 16);
		ps = site(code, (size_t)n, fns[i].args, fns[i].null_arg);
		printf("  %-15s +%-2u %-24s %s\n", fns[i].sym, ps.offset, ps.insn, ps.why);
		/* Every allocator entry point of glibc has an emulated site... */
		assert_true(ps.emulated);
		assert_true(ps.offset < 32);
		/* ...and decoding from that site starts with the same instruction. */
		at = site(code + ps.offset, (size_t)n - ps.offset, fns[i].args, fns[i].null_arg);
		assert_int_equal(at.offset, 0);
		assert_string_equal(at.insn, ps.insn);
	}
	/* glibc's free begins with its NULL test: the site is past it. */
	{
		struct elf_func fn;
		struct probesite ps;
		uint8_t code[96];

		assert_int_equal(elf_file__find_func(ef, "free", &fn), 0);
		assert_true(elf_file__pread(ef, code, sizeof(code), fn.offset) > 16);
		ps = site(code, sizeof(code), RDI, 0);
		if (code[0] == 0x48 && code[1] == 0x85 && code[2] == 0xff)
			assert_true(ps.offset > 3);
	}
	elf_file__close(ef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_real_glibc),
	};

	return cmocka_run_group_tests_name("probesite", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - unit tests of the collector's unwinder
 * (user/collector/unwind/localstack.c, ehframe.c) on real code: frames of known
 * shapes built without frame pointers (unwind_shapes.c: recursion, a VLA
 * and alloca, whose CFA comes from the frame pointer, a frame of 8 KiB, all
 * of them in one chain; a leaf interrupted by a signal), one frame with a
 * frame pointer and no CFI, the same shapes from a library unloaded and
 * replaced by another at its addresses (by the collector's dlclose, and
 * by the C library's behind its back), and from four threads at once.
 * Each walk must give the return addresses the functions saw, in order,
 * and reach the outermost frame (_start, a thread's start) or say it did
 * not. Then the rules of hand-made CFI: the x86-64 PLT's CFA expression,
 * a stack realigned through the frame pointer, an expression not handled.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <cmocka.h>

#include "ehframe.h"
#include "localstack.h"
#include "modcfi.h"
#include "unwind_shapes.h"

#define WALK_MAX 96

struct walk {
	uintptr_t ip[WALK_MAX];
	int n;
	bool broken;
};

static __thread struct walk walk;
static volatile unsigned long shapes_sink_test;

/* Every shape's last callee: the walk, from here. */
__attribute__((noipa)) static int walk_here(void)
{
	shapes_chain.ra[shapes_chain.n++] = (uintptr_t)__builtin_return_address(0);
	walk.n = localstack__walk((void **)walk.ip, WALK_MAX, &walk.broken);
	return walk.n;
}

/*
 * Does the walk, from @at on, hold the chain the shapes saw (innermost
 * first) and go on to the outermost frame? 0, or the index that differs
 * plus one (-1: incomplete).
 */
static int chain_check(const struct walk *w, int at)
{
	const struct shapes_chain *c = &shapes_chain;

	for (int i = 0; i < c->n; i++) {
		if (at + i >= w->n || w->ip[at + i] != c->ra[c->n - 1 - i])
			return i + 1;
	}
	return w->broken || w->n == WALK_MAX ? -1 : 0;
}

/* The walk's own frame, the one in walk_here, then the chain. */
static void expect_chain(void)
{
	assert_true(walk.n > 2);
	assert_true(walk.ip[1] - (uintptr_t)walk_here < 4096);
	assert_int_equal(chain_check(&walk, 2), 0);
}

static void test_recursion(void **state)
{
	(void)state;
	for (int depth = 1; depth <= 20; depth += 19) {
		shapes_chain.n = 0;
		shape_recurse(depth, walk_here);
		assert_int_equal(shapes_chain.n, depth + 1);
		expect_chain();
	}
}

static void test_vla_alloca_big(void **state)
{
	(void)state;
	shapes_chain.n = 0;
	shape_vla(100, walk_here);
	expect_chain();
	shapes_chain.n = 0;
	shape_alloca(700, walk_here);
	expect_chain();
	shapes_chain.n = 0;
	shape_big(walk_here);
	expect_chain();
}

static void test_mixed(void **state)
{
	(void)state;
	shapes_chain.n = 0;
	shape_mixed(walk_here);
	/* mixed, 3 x recurse, mixed_2, vla, mixed_3, big, mixed_4, alloca, walk_here */
	assert_int_equal(shapes_chain.n, 11);
	expect_chain();
}

/*
 * A rule is parsed once: the same walk again parses only what it put out
 * of the cache itself (two of its pcs on one entry: the cache is mapped
 * directly, and where the libraries land decides).
 */
static void test_cache(void **state)
{
	struct localstack_stats a, b;
	volatile int rounds = 2;	/* one call site, the loop not unrolled */

	(void)state;
	for (int i = 0; i < rounds; i++) {
		localstack__stats(&a);
		shapes_chain.n = 0;
		shape_mixed(walk_here);
		localstack__stats(&b);
		expect_chain();
	}
	assert_int_equal(b.walks, a.walks + 1);
	assert_int_equal(b.parsed - a.parsed, b.evicted - a.evicted);
}

/*
 * A frame pointer and no CFI: the walk steps past it by the frame
 * pointer and goes on complete. On arm64 the caller (this function, built
 * as GCC builds by default there: frame records kept) has its CFA from
 * the record x29 points at, not from the stack pointer the step cannot
 * know (docs/COLLECTOR.md, "No FDE").
 */
static void test_nocfi(void **state)
{
	(void)state;
	shapes_chain.n = 0;
	shape_nocfi(walk_here);
	expect_chain();
}

/* The leaf's trap: the handler walks through the signal frame. */
static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	walk.n = localstack__walk((void **)walk.ip, WALK_MAX, &walk.broken);
#if defined(__aarch64__)
	((ucontext_t *)ctx)->uc_mcontext.pc += 4;	/* past brk */
#else
	(void)ctx;
#endif
}

static void test_signal_leaf(void **state)
{
	struct sigaction sa = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO }, old;
	int at = -1;

	(void)state;
	assert_int_equal(sigaction(SIGTRAP, &sa, &old), 0);
	shapes_chain.n = 0;
	shape_leaf();
	sigaction(SIGTRAP, &old, NULL);
	/* walk, on_trap, the trampoline, then the trap's pc itself. */
	for (int i = 0; i < walk.n; i++) {
		if (walk.ip[i] == (uintptr_t)shapes_trap_pc) {
			at = i;
			break;
		}
	}
	assert_int_equal(at, 3);
	assert_int_equal(chain_check(&walk, at + 1), 0);
}

/* The directory of this test's binary, where the libraries are. */
static void lib_path(char *out, size_t cap, const char *name)
{
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	assert_true(n > 0);
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	snprintf(out, cap, "%s/%s", exe, name);
}

/* swap_enter()'s frame, its caller's return address known here. */
__attribute__((noipa)) static int swap_walk(swap_fn fn)
{
	int r;

	shapes_chain.ra[shapes_chain.n++] = (uintptr_t)__builtin_return_address(0);
	r = fn(walk_here);
	shapes_sink_test += (unsigned long)r;
	return r;
}

static void *lib_walk(const char *name, uintptr_t *base, uintptr_t *swap_ra)
{
	char path[PATH_MAX];
	void *h;
	shapes_lib_fn fn;
	swap_fn swap;
	Dl_info info;

	lib_path(path, sizeof(path), name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	fn = (shapes_lib_fn)dlsym(h, "shapes_lib_enter");
	assert_non_null(fn);
	assert_true(dladdr((void *)fn, &info));
	*base = (uintptr_t)info.dli_fbase;
	shapes_chain.n = 0;
	fn(6, walk_here);
	/* enter, 6 x recurse, walk_here */
	assert_int_equal(shapes_chain.n, 8);
	expect_chain();
	swap = (swap_fn)dlsym(h, "swap_enter");
	assert_non_null(swap);
	shapes_chain.n = 0;
	swap_walk(swap);
	/*
	 * walk, walk_here, swap_enter (walk_here's return address), swap_walk
	 * (swap_enter's, not recorded), lib_walk (swap_walk's), on complete.
	 */
	assert_int_equal(shapes_chain.n, 2);
	*swap_ra = shapes_chain.ra[1];
	assert_true(walk.n > 5);
	assert_int_equal(walk.ip[2], shapes_chain.ra[1]);
	assert_true(walk.ip[3] - (uintptr_t)swap_walk < 4096);
	assert_int_equal(walk.ip[4], shapes_chain.ra[0]);
	assert_false(walk.broken);
	return h;
}

/*
 * A library's rules, then the library unloaded and another loaded at the
 * same addresses (the loader reuses them): the second walks must use the
 * second library's CFI, not rules kept for the first. swap_enter() returns
 * from the same address in both with a frame of another size: a rule
 * kept from a would read b's return address from the wrong slot. The
 * collector's dlclose (dlclose.c, linked into this test as into the
 * preload) empties the cache before any walk.
 */
static void test_dlclose(void **state)
{
	struct localstack_stats a, b;
	uintptr_t base_a, base_b, ra_a, ra_b;
	void *h;

	(void)state;
	h = lib_walk("libshapes_a.so", &base_a, &ra_a);
	localstack__stats(&a);
	assert_int_equal(dlclose(h), 0);
	localstack__stats(&b);
	assert_true(b.epochs > a.epochs);
	h = lib_walk("libshapes_b.so", &base_b, &ra_b);
	localstack__stats(&b);
	assert_true(b.parsed > a.parsed);
	if (base_a != base_b || ra_a != ra_b)
		print_message("note: libshapes_b.so's swap_enter returns at %#lx, not a's %#lx:"
			      " the same address was not reused\n", (unsigned long)ra_b,
			      (unsigned long)ra_a);
	dlclose(h);
}

/*
 * CFI that .eh_frame_hdr does not index (modcfi.c): the shapes as a
 * library whose CFI is in .debug_frame alone, read from its file, and as
 * one linked without .eh_frame_hdr. Walked whole through each; its
 * section indexed once; walked again, nothing read again.
 */
static void test_modcfi(void **state)
{
	static const char *const names[] = { "libshapes_dbg.so", "libshapes_nohdr.so" };
	struct modcfi_stats a, b, c;

	(void)state;
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX];
		shapes_lib_fn fn;
		void *h;

		lib_path(path, sizeof(path), names[i]);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		assert_non_null(h);
		fn = (shapes_lib_fn)dlsym(h, "shapes_lib_enter");
		assert_non_null(fn);
		modcfi__stats(&a);
		shapes_chain.n = 0;
		fn(6, walk_here);
		/* enter, 6 x recurse, walk_here */
		assert_int_equal(shapes_chain.n, 8);
		expect_chain();
		modcfi__stats(&b);
		assert_int_equal(b.debug_indexed - a.debug_indexed, i == 0);
		assert_int_equal(b.eh_indexed - a.eh_indexed, i == 1);
		assert_int_equal(b.bad, a.bad);
		shapes_chain.n = 0;
		fn(6, walk_here);
		expect_chain();
		modcfi__stats(&c);
		assert_int_equal(c.modules, b.modules);
		dlclose(h);
	}
}

/*
 * The same, unloaded by the C library's dlclose itself, as glibc unloads
 * iconv's modules (not through the collector's dlclose): the cache is
 * not emptied then, and the first rule parsed after it (b's own frames)
 * finds the loader's count of unloads moved: the epoch moves, that walk
 * starts again, and the swap walk is b's.
 */
static void test_unload_unseen(void **state)
{
	int (*libc_dlclose)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	struct localstack_stats a, b;
	uintptr_t base_a, base_b, ra_a, ra_b;
	void *h;

	(void)state;
	assert_non_null(libc_dlclose);
	assert_ptr_not_equal(libc_dlclose, dlclose);
	h = lib_walk("libshapes_a.so", &base_a, &ra_a);
	localstack__stats(&a);
	assert_int_equal(libc_dlclose(h), 0);
	localstack__stats(&b);
	assert_int_equal(b.epochs, a.epochs);
	h = lib_walk("libshapes_b.so", &base_b, &ra_b);
	localstack__stats(&b);
	assert_true(b.epochs > a.epochs);
	dlclose(h);
}

#define THREADS 4
#define ROUNDS 3000

static void *thread_walks(void *arg)
{
	uintptr_t bad = 0;

	for (int i = 0; i < ROUNDS; i++) {
		int depth = 1 + (int)(uintptr_t)arg * 3 + i % 7;

		shapes_chain.n = 0;
		if (i % 3)
			shape_recurse(depth, walk_here);
		else
			shape_mixed(walk_here);
		/* to the thread's start: complete, the chain exact */
		if (walk.n < 3 || chain_check(&walk, 2))
			bad++;
	}
	return (void *)bad;
}

/* Four threads filling and reading the rule cache at once. */
static void test_threads(void **state)
{
	pthread_t th[THREADS];

	(void)state;
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, thread_walks, (void *)i), 0);
	for (int i = 0; i < THREADS; i++) {
		void *bad;

		assert_int_equal(pthread_join(th[i], &bad), 0);
		assert_int_equal((uintptr_t)bad, 0);
	}
}

/* --- hand-made CFI ----------------------------------------------------- */

static _Alignas(16) uint8_t code[64];	/* the addresses the FDE covers, never run */

/* Static, as CFI is: pcrel pointers of 4 bytes reach code[]. */
static struct cfi_buf {
	_Alignas(8) uint8_t b[256];
	size_t n;
} cfi;

static void put(struct cfi_buf *c, const void *p, size_t n)
{
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void put8(struct cfi_buf *c, uint8_t v)
{
	put(c, &v, 1);
}

static void put32(struct cfi_buf *c, uint32_t v)
{
	put(c, &v, 4);
}

/*
 * .eh_frame_hdr (one table entry), then a CIE (zR, pcrel sdata4; CFA =
 * sp + 8 at first... only the FDE's @insn matter) and one FDE over code[]
 * with instructions @insn[@len], into @c. Returns the module.
 */
static struct ls_module cfi_make(struct cfi_buf *c, const uint8_t *insn, size_t len)
{
	size_t eh, cie, fde, len_at, field;
	int32_t v;

	memset(c, 0, sizeof(*c));
	put8(c, 1);
	put8(c, 0x1b);	/* eh_frame_ptr: pcrel sdata4 */
	put8(c, 0x03);	/* fde_count: udata4 */
	put8(c, 0x3b);	/* table: datarel sdata4 */
	put32(c, 0);	/* eh_frame_ptr, below */
	put32(c, 1);
	put32(c, 0);	/* initial location, below */
	put32(c, 0);	/* FDE, below */
	eh = c->n;
	v = (int32_t)(eh - 4);
	memcpy(c->b + 4, &v, 4);
	/* CIE */
	cie = c->n;
	put32(c, 0);
	put32(c, 0);	/* CIE id */
	put8(c, 1);
	put(c, "zR", 3);
	put8(c, 1);	/* code alignment */
	put8(c, 0x78);	/* data alignment -8 */
#if defined(__x86_64__)
	put8(c, LS_DW_PC);
#else
	put8(c, LS_DW_LR);
#endif
	put8(c, 1);	/* augmentation data: */
	put8(c, 0x1b);	/* FDE pointers pcrel sdata4 */
	put8(c, 0x0c);	/* DW_CFA_def_cfa sp, 8 */
	put8(c, LS_DW_SP);
	put8(c, 8);
	while ((c->n - cie) % 4)
		put8(c, 0);
	v = (int32_t)(c->n - cie - 4);
	memcpy(c->b + cie, &v, 4);
	/* FDE */
	fde = c->n;
	put32(c, 0);
	field = c->n;
	put32(c, (uint32_t)(field - cie));	/* CIE pointer, back from here */
	field = c->n;
	put32(c, (uint32_t)((intptr_t)code - (intptr_t)(c->b + field)));
	put32(c, sizeof(code));
	put8(c, 0);	/* no augmentation data */
	put(c, insn, len);
	while ((c->n - fde) % 4)
		put8(c, 0);
	len_at = fde;
	v = (int32_t)(c->n - fde - 4);
	memcpy(c->b + len_at, &v, 4);
	put32(c, 0);	/* terminator */
	v = (int32_t)((intptr_t)code - (intptr_t)c->b);
	memcpy(c->b + 12, &v, 4);
	v = (int32_t)fde;
	memcpy(c->b + 16, &v, 4);
	return (struct ls_module){ c->b, (uintptr_t)c->b, (uintptr_t)(c->b + c->n) };
}

#if defined(__x86_64__)
/* The linker's PLT CFA: rsp + 8, + 8 more from the 11th byte of an entry. */
static void test_cfi_plt(void **state)
{
	static const uint8_t insn[] = { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a,
					0x33, 0x24, 0x22,	/* the CFA */
					0x80 | LS_DW_PC, 1 };	/* RA at CFA - 8 */
	struct ls_module m = cfi_make(&cfi, insn, sizeof(insn));
	struct ls_rule r;

	(void)state;
	assert_int_equal(ehframe__rule(&m, (uintptr_t)code + 5, (uintptr_t)code + 5, &r), 0);
	assert_int_equal(r.flags, LS_RULE_PLAIN);
	assert_int_equal(r.cfa_base, LS_BASE_SP);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.ra, LS_LOC(LS_AT, LS_BASE_CFA));
	assert_int_equal(r.ra_off, -8);
	assert_int_equal(ehframe__rule(&m, (uintptr_t)code + 27, (uintptr_t)code + 27, &r), 0);
	assert_int_equal(r.cfa_off, 16);
	/* Past the FDE: none. */
	assert_int_equal(ehframe__rule(&m, (uintptr_t)code + 64, (uintptr_t)code + 64, &r), -ENOENT);
}
#endif

/* main() realigning its stack: CFA = *(fp - 8), fp saved at fp. */
static void test_cfi_realign(void **state)
{
	const uint8_t insn[] = {
		0x0f, 3, 0x70 + LS_DW_FP, 0x78, 0x06,	/* def_cfa_expression: *(fp - 8) */
		0x10, LS_DW_FP, 2, 0x70 + LS_DW_FP, 0,	/* expression: fp at fp + 0 */
#if defined(__x86_64__)
		0x80 | LS_DW_PC, 1,			/* RA at CFA - 8 */
#else
		0x80 | LS_DW_LR, 1,
#endif
	};
	struct ls_module m = cfi_make(&cfi, insn, sizeof(insn));
	struct ls_rule r;

	(void)state;
	assert_int_equal(ehframe__rule(&m, (uintptr_t)code + 8, (uintptr_t)code + 9, &r), 0);
	assert_int_equal(r.flags, LS_RULE_CFA_DEREF);
	assert_int_equal(r.cfa_base, LS_BASE_FP);
	assert_int_equal(r.cfa_off, -8);
	assert_int_equal(r.fp, LS_LOC(LS_AT, LS_BASE_FP));
	assert_int_equal(r.fp_off, 0);
	assert_int_equal(r.ra, LS_LOC(LS_AT, LS_BASE_CFA));
	assert_int_equal(r.ra_off, -8);
}

/* A CFA from a register the walk does not follow, an expression it cannot reduce. */
static void test_cfi_bad(void **state)
{
	const uint8_t from_reg[] = { 0x0c, 3, 16 };	/* def_cfa r3, 16 */
	const uint8_t branch[] = { 0x0f, 4, 0x70 + LS_DW_SP, 8, 0x2f, 0 };	/* skip */
	struct ls_module m = cfi_make(&cfi, from_reg, sizeof(from_reg));
	struct ls_rule r;

	(void)state;
	assert_int_equal(ehframe__rule(&m, (uintptr_t)code, (uintptr_t)code, &r), 0);
	assert_int_equal(r.flags & LS_RULE_BAD, LS_RULE_BAD);
	m = cfi_make(&cfi, branch, sizeof(branch));
	assert_int_equal(ehframe__rule(&m, (uintptr_t)code, (uintptr_t)code, &r), 0);
	assert_int_equal(r.flags & LS_RULE_BAD, LS_RULE_BAD);
	/* A truncated FDE: malformed, not a rule. */
	m = cfi_make(&cfi, from_reg, sizeof(from_reg));
	m.hi = m.lo + 40;
	assert_int_equal(ehframe__rule(&m, (uintptr_t)code, (uintptr_t)code, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_vla_alloca_big),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_nocfi),
		cmocka_unit_test(test_signal_leaf),
		cmocka_unit_test(test_dlclose),
		cmocka_unit_test(test_unload_unseen),
		cmocka_unit_test(test_modcfi),
		cmocka_unit_test(test_threads),
#if defined(__x86_64__)
		cmocka_unit_test(test_cfi_plt),
#endif
		cmocka_unit_test(test_cfi_realign),
		cmocka_unit_test(test_cfi_bad),
	};

	localstack__init(false, 0, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

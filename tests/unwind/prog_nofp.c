// SPDX-License-Identifier: MIT
/*
 * prog_nofp.c - allocations through chains of frames none of which keeps a
 * frame pointer (-O2 -fomit-frame-pointer), across its own library
 * libnofp.so, one frame of libfp.so that has no CFI, and libnofp_late.so,
 * dlopen()ed while traced. What test_unwind.sh expects, innermost first:
 *
 *   3 x 1111 bytes: lib_leaf p_deep p_callback fp_hop lib_back lib_mid
 *                   lib_enter p_step p_run main
 *   1 x 3333 bytes: lib_leaf p_deep p_callback fp_hop lib_back lib_mid
 *                   lib_enter p_thread start_thread (a thread)
 *   2 x 2222 bytes: lib_leaf p_late_cb late_mid late_enter p_late main
 *   1 x 5555 bytes: lib_leaf p_bigframe, then pages never touched: the
 *                   frames below them, marked unreadable past there
 *   1 x 4444 bytes: lib_leaf p_recurse... (80 KiB deep, every page of
 *                   it touched, so whole; test_stackcut.sh cuts it with
 *                   --stack-copy 16384. Its 4 KiB frames once wrote
 *                   only their first byte: where ASLR put the stack's
 *                   top, a page of one was never touched, and the copy,
 *                   read page by page to 64 KiB, cut it there)
 *
 * Every function uses its callee's result after the call, so none of the
 * calls is a tail jump and the chains are the source's.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nofp.h"

void *volatile keep[16];
volatile unsigned long sink;

/* A variable-length array: this frame's CFA is found through %rbp. */
__attribute__((noipa)) static void *p_deep(size_t n, int depth)
{
	volatile char pad[16 + (n & 7)];
	void *p;

	pad[0] = (char)depth;
	p = lib_leaf(n, depth + pad[0]);
	sink += pad[0];
	return p;
}

__attribute__((noipa)) static void *p_callback(size_t n, int depth)
{
	unsigned long a = sink, b = a * 7 + 1, c = b * 11 + 2, d = c * 13 + 3;
	void *p = p_deep(n, depth);

	sink = a + b + c + d;
	return p;
}

__attribute__((noipa)) static void *p_step(size_t n)
{
	unsigned long a = sink, b = a * 3 + 1, c = b * 5 + 2, d = c * 7 + 3, e = d * 9 + 4;
	void *p = lib_enter(p_callback, n, 0);

	sink = a * b + c * d + e;
	return p;
}

__attribute__((noipa)) static void *p_run(size_t n)
{
	unsigned long a = sink, b = a * 17 + 1;
	void *p = p_step(n);

	sink = a ^ b;
	return p;
}

__attribute__((noipa)) static void *p_thread(void *arg)
{
	unsigned long a = sink, b = a * 19 + 1;
	void *p = lib_enter(p_callback, (size_t)arg, 0);

	sink = a + b;
	return p;
}

__attribute__((noipa)) static void *p_late_cb(size_t n, int depth)
{
	unsigned long a = sink, b = a * 23 + 1;
	void *p = lib_leaf(n, depth);

	sink = a + b;
	return p;
}

__attribute__((noipa)) static void *p_late(void *(*enter)(nofp_cb, size_t), size_t n)
{
	unsigned long a = sink, b = a * 27 + 1;
	void *p = enter(p_late_cb, n);

	sink = a ^ b;
	return p;
}

/*
 * A 32 KiB local array written only at its low end: the stack pages in
 * between are never touched, so not present, and a BPF read of them fails.
 * Called before anything else went that deep.
 */
__attribute__((noipa)) static void *p_bigframe(size_t n)
{
	volatile char big[32768 + (n & 7)];
	void *p;

	big[0] = 1;
	p = lib_leaf(n, big[0]);
	sink += big[0];
	return p;
}

/* 20 frames of 4 KiB and more: deeper than --stack-copy's maximum. */
__attribute__((noipa)) static void *p_recurse(size_t n, int depth)
{
	volatile char pad[4096 + (n & 7)];
	void *p;

	/* Every 2 KiB written: no page of the frame is left untouched. */
	for (size_t i = 0; i < sizeof(pad); i += 2048)
		pad[i] = (char)depth;
	pad[sizeof(pad) - 1] = (char)depth;
	p = depth ? p_recurse(n, depth - 1) : lib_leaf(n, 0);
	sink += pad[0];
	return p;
}

int main(void)
{
	void *(*late)(nofp_cb, size_t);
	pthread_t th;
	void *lib;
	int k = 0;

	keep[k++] = p_bigframe(5555);
	for (int i = 0; i < 3; i++)
		keep[k++] = p_run(1111);
	if (pthread_create(&th, NULL, p_thread, (void *)3333) || pthread_join(th, (void **)&keep[k++]))
		return 1;
	lib = dlopen("libnofp_late.so", RTLD_NOW);
	late = lib ? (void *(*)(nofp_cb, size_t))dlsym(lib, "late_enter") : NULL;
	if (!late) {
		fprintf(stderr, "prog_nofp: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 2; i++)
		keep[k++] = p_late(late, 2222);
	keep[k++] = p_recurse(4444, 20);
	return 0;
}

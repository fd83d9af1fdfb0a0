// SPDX-License-Identifier: MIT
/*
 * unwind_shapes.c - the frames test_unwind.c walks (see unwind_shapes.h):
 * -O2 -fomit-frame-pointer, every call's result used after it so that no
 * call is a tail jump. Built into the test, and as libshapes_a.so and
 * libshapes_b.so (SHAPES_LIB: only shapes_lib_enter exported; b padded,
 * so the same addresses hold other code when it replaces a).
 */
#include <alloca.h>

#include "unwind_shapes.h"

#define RECORD() (shapes_chain.ra[shapes_chain.n < SHAPES_MAX ? shapes_chain.n++ : 0] = \
		  (uintptr_t)__builtin_return_address(0))

volatile unsigned long shapes_sink;

#ifndef SHAPES_LIB
__thread struct shapes_chain shapes_chain;
#endif

#ifdef SHAPES_PAD
/* b's padding: what sits at a's addresses is other code. */
__attribute__((noipa, used)) static unsigned long pad(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 2654435761u + (x >> 7) + i;
	return x ^ (x >> 13) ^ (x << 3) ^ 0x5bd1e995;
}
#endif

__attribute__((noipa)) int shape_recurse(int depth, shapes_cb cb)
{
	unsigned long a = shapes_sink, b = a * 7 + 1;
	int r;

	RECORD();
	r = depth > 1 ? shape_recurse(depth - 1, cb) : cb();
	shapes_sink = a + b + (unsigned long)r;
	return r + 1;
}

__attribute__((noipa)) int shape_vla(size_t n, shapes_cb cb)
{
	volatile char buf[16 + (n & 255)];
	int r;

	RECORD();
	buf[0] = (char)n;
	r = cb();
	shapes_sink += buf[0];
	return r + 1;
}

__attribute__((noipa)) int shape_alloca(size_t n, shapes_cb cb)
{
	volatile char *buf = alloca(32 + (n & 1023));
	int r;

	RECORD();
	buf[0] = (char)n;
	r = cb();
	shapes_sink += buf[0];
	return r + 1;
}

__attribute__((noipa)) int shape_big(shapes_cb cb)
{
	volatile char big[8192 + 40];
	int r;

	RECORD();
	big[0] = 1;
	big[sizeof(big) - 1] = 2;
	r = cb();
	shapes_sink += big[0] + big[sizeof(big) - 1];
	return r + 1;
}

static shapes_cb mixed_cb;

__attribute__((noipa)) static int mixed_4(void)
{
	int r;

	RECORD();
	r = shape_alloca(100, mixed_cb);
	shapes_sink += (unsigned long)r;
	return r + 1;
}

__attribute__((noipa)) static int mixed_3(void)
{
	int r;

	RECORD();
	r = shape_big(mixed_4);
	shapes_sink += (unsigned long)r;
	return r + 1;
}

__attribute__((noipa)) static int mixed_2(void)
{
	int r;

	RECORD();
	r = shape_vla(33, mixed_3);
	shapes_sink += (unsigned long)r;
	return r + 1;
}

/* recurse(3) -> mixed_2 -> vla -> mixed_3 -> big -> mixed_4 -> alloca -> cb */
__attribute__((noipa)) int shape_mixed(shapes_cb cb)
{
	int r;

	RECORD();
	mixed_cb = cb;
	r = shape_recurse(3, mixed_2);
	shapes_sink += (unsigned long)r;
	return r + 1;
}

#ifndef SHAPES_LIB
/* A leaf: no frame of its own on x86-64 (CFA = sp + 8), x30 unsaved on arm64. */
__attribute__((noipa)) int shape_leaf(void)
{
	RECORD();
#if defined(__x86_64__)
	__asm__ volatile("int3\n\t.globl shapes_trap_pc\nshapes_trap_pc:" ::: "memory");
#else
	__asm__ volatile(".globl shapes_trap_pc\nshapes_trap_pc:\n\tbrk #0x3e8" ::: "memory");
#endif
	return (int)shapes_sink;
}
#endif

#ifdef SHAPES_LIB
/* Each library's one export: a chain of @depth frames of its own code. */
__attribute__((visibility("default"))) int shapes_lib_enter(int depth, shapes_cb cb)
{
	int r;

	RECORD();
#ifdef SHAPES_PAD
	shapes_sink += pad(shapes_sink);
#endif
	r = shape_recurse(depth, cb);
	shapes_sink += (unsigned long)r;
	return r + 1;
}
#endif

/* SPDX-License-Identifier: MIT */
/*
 * unwind_shapes.h - frames of known shapes for the collector's unwinder
 * test (test_unwind.c), built -O2 -fomit-frame-pointer (unwind_shapes.c,
 * also as two shared libraries that are loaded and unloaded in turn) and
 * one file with frame pointers and no CFI (unwind_nocfi.c). Each function
 * writes its own return address to shapes_ra[] on entry, so the chain the
 * walk must find is the one the program knows.
 */
#ifndef UNWIND_SHAPES_H
#define UNWIND_SHAPES_H

#include <stddef.h>
#include <stdint.h>

typedef int (*shapes_cb)(void);

/* The return addresses the shapes saw, outermost first (per thread). */
#define SHAPES_MAX 64
struct shapes_chain {
	uintptr_t ra[SHAPES_MAX];
	int n;
};
extern __thread struct shapes_chain shapes_chain;

/* The shapes: each ends calling @cb and returns its result. */
int shape_recurse(int depth, shapes_cb cb);	/* @depth frames of itself */
int shape_vla(size_t n, shapes_cb cb);		/* a VLA: the CFA from the frame pointer */
int shape_alloca(size_t n, shapes_cb cb);	/* alloca() */
int shape_big(shapes_cb cb);			/* a frame of 8 KiB and more */
int shape_mixed(shapes_cb cb);			/* recurse, vla, big, alloca in one chain */
int shape_leaf(void);				/* a leaf that traps (SIGTRAP) */
int shape_nocfi(shapes_cb cb);			/* unwind_nocfi.c: frame pointer, no CFI */

/* Where shape_leaf's trap leaves the pc: after int3 (x86-64), at brk (arm64). */
extern const char shapes_trap_pc[];

/* The shared libraries' entries (dlsym "shapes_lib_enter", "swap_enter"). */
typedef int (*shapes_lib_fn)(int depth, shapes_cb cb);
typedef int (*swap_fn)(shapes_cb cb);	/* unwind_swap.S */

#endif

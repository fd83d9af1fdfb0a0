// SPDX-License-Identifier: MIT
/*
 * libnofp.c - three frames of the chain, built -O2 -fomit-frame-pointer:
 * lib_enter -> lib_mid -> lib_back -> (libfp.so) fp_hop -> the program's
 * callback; and lib_leaf, which allocates. Each keeps several values live
 * across its call so that %rbp is used as a plain register, and uses the
 * result after the call so that no call becomes a tail jump. Its
 * constructor leaks 1357 bytes while the dynamic loader starts the
 * program: a stack that ends at _dl_start_user, which has no CFI and
 * zeroes %rbp (the outermost frame), complete.
 */
#include <stdlib.h>

#include "nofp.h"

volatile unsigned long nofp_sink;

#define MIX(a, b) ((a) * 2654435761UL + (b))

__attribute__((noipa)) static void *lib_back(nofp_cb cb, size_t n, int depth)
{
	unsigned long a = nofp_sink, b = MIX(a, 1), c = MIX(b, 2), d = MIX(c, 3), e = MIX(d, 4);
	void *p = fp_hop(cb, n, depth);

	nofp_sink = a + b + c + d + e;
	return p;
}

__attribute__((noipa)) static void *lib_mid(nofp_cb cb, size_t n, int depth)
{
	unsigned long a = nofp_sink, b = MIX(a, 5), c = MIX(b, 6), d = MIX(c, 7);
	void *p = lib_back(cb, n, depth);

	nofp_sink = a ^ b ^ c ^ d;
	return p;
}

__attribute__((noipa)) void *lib_enter(nofp_cb cb, size_t n, int depth)
{
	unsigned long a = nofp_sink, b = MIX(a, 8), c = MIX(b, 9), d = MIX(c, 10), e = MIX(d, 11),
		      f = MIX(e, 12);
	void *p = lib_mid(cb, n, depth);

	nofp_sink = a + b * c + d * e + f;
	return p;
}

__attribute__((noipa)) void *lib_leaf(size_t n, int depth)
{
	unsigned long a = nofp_sink, b = MIX(a, 13), c = MIX(b, 14);
	void *p = malloc(n);

	nofp_sink = a + b + c + (unsigned long)depth;
	return p;
}

void *volatile nofp_ctor_block;

__attribute__((constructor, noipa)) static void lib_ctor(void)
{
	nofp_ctor_block = lib_leaf(1357, 0);
}

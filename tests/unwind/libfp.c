// SPDX-License-Identifier: MIT
/*
 * libfp.c - one frame of the chain with frame pointers and no CFI (built
 * -fno-asynchronous-unwind-tables -fno-unwind-tables): the unwinder must
 * fall back to %rbp here and go on by CFI above it.
 */
#include "nofp.h"

volatile int fp_sink;

__attribute__((noipa)) void *fp_hop(nofp_cb cb, size_t n, int depth)
{
	void *p = cb(n, depth);

	fp_sink++;
	return p;
}

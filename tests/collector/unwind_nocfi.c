// SPDX-License-Identifier: MIT
/*
 * unwind_nocfi.c - one frame with a frame pointer and no CFI
 * (-fno-omit-frame-pointer -fno-asynchronous-unwind-tables): x86-64's
 * walk takes one frame-pointer step past it, arm64's stops there.
 */
#include "unwind_shapes.h"

volatile unsigned long nocfi_sink;

__attribute__((noipa)) int shape_nocfi(shapes_cb cb)
{
	int r;

	shapes_chain.ra[shapes_chain.n++] = (uintptr_t)__builtin_return_address(0);
	r = cb();
	nocfi_sink += (unsigned long)r;
	return r + 1;
}

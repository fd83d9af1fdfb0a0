// SPDX-License-Identifier: MIT
/*
 * backtrace.c - the firmware's stack walk: the ARM EHABI unwind tables
 * ("Exception Handling ABI for the Arm Architecture", IHI 0038: one
 * .ARM.exidx entry a function, -funwind-tables) read by libgcc's
 * _Unwind_Backtrace, which is in every arm-none-eabi toolchain.
 *
 * Why not frame pointers: GCC's Thumb-2 frame pointer (r7) points below a
 * function's locals, not at a {fp, lr} pair, so a chain cannot be walked
 * without each function's frame size, and -mapcs-frame is for the ARM
 * instruction set, which a Cortex-M does not have. Why not
 * __builtin_return_address(N): GCC answers 0 for every N > 0 on ARM. The
 * tables cost 8 bytes a function (more for large frames, in .ARM.extab)
 * and give every frame of code built with them, at any optimization
 * level, leaf functions and tail calls as they really are on the stack.
 *
 * The walk ends at reset_handler (startup.c, alone in .text.reset):
 * its frame is kept, nothing above it (its LR is the reset value).
 */
#include <unwind.h>

#include "heapsnoop/alloc_metadata.h"
#include "fw.h"

extern const char __reset_start[], __reset_end[];

struct walk {
	uint64_t *frames;
	uint32_t max, n, skip;
	uint32_t cut;
	int ended;	/* reset_handler's frame seen */
};

static _Unwind_Reason_Code step(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t ip = _Unwind_GetIP(ctx);	/* the Thumb bit cleared */

	if (w->skip) {
		w->skip--;
		return _URC_NO_REASON;
	}
	if (w->n == w->max) {
		w->cut = HS_AM_CUT_DEPTH;
		return _URC_END_OF_STACK;
	}
	w->frames[w->n++] = ip;
	if (ip >= (uintptr_t)__reset_start && ip < (uintptr_t)__reset_end) {
		w->ended = 1;
		return _URC_END_OF_STACK;
	}
	return _URC_NO_REASON;
}

__attribute__((noinline)) uint32_t fw_backtrace(uint64_t *frames, uint32_t max, uint32_t skip,
						uint32_t *cut)
{
	/* _Unwind_Backtrace's first frame is this function's own. */
	struct walk w = { .frames = frames, .max = max, .skip = skip + 1 };

	_Unwind_Backtrace(step, &w);
	*cut = w.cut ? w.cut : w.ended ? 0 : HS_AM_CUT_UNREADABLE;
	return w.n;
}

/* SPDX-License-Identifier: MIT */
/*
 * localstack.h - the stack of the thread that called the allocator, from
 * inside the process: libunwind's unw_backtrace (by .eh_frame, complete
 * without frame pointers; cached per address by libunwind), or frame
 * pointers when asked (cheaper, complete only where every caller keeps
 * them). Frames inside the collector's own object are dropped, so frame 0
 * is the return address into the allocator's caller, as heapsnoop's.
 * Why libunwind: docs/COLLECTOR.md ("Unwinding in the process").
 */
#ifndef HEAPSNOOP_COLLECTOR_LOCALSTACK_H
#define HEAPSNOOP_COLLECTOR_LOCALSTACK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Learn the address range of the object that holds this file (dladdr and
 * dl_iterate_phdr, no allocation); @use_fp chooses the frame-pointer walk.
 */
void localstack__init(bool use_fp);

/*
 * Up to @max (<= 31) return addresses of the calling thread into @frames,
 * call site of the allocator first. *@cut is set true when the stack went
 * on past @max frames (the walk found one more), else false. Returns the
 * count (0: none found).
 */
int localstack__capture(uint64_t *frames, int max, bool *cut);

#endif /* HEAPSNOOP_COLLECTOR_LOCALSTACK_H */

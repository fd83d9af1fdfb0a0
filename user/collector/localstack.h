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

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdbool.h>
#include <stdint.h>

/* The collector's own frames at most: the entry point, if not inlined more. */
#define LOCALSTACK_SKIP_MAX 8
/* Return addresses a capture needs room for: skipped, kept, one to tell a cut. */
#define LOCALSTACK_BUF (LOCALSTACK_SKIP_MAX + 31 + 1)

/* Set by localstack__init(): read by the inline capture. */
extern uintptr_t localstack_self_start, localstack_self_end;	/* our text */
extern bool localstack_fp;	/* walk frame pointers, not libunwind */

/*
 * Learn the address range of the object that holds this file (dladdr and
 * dl_iterate_phdr, no allocation); @use_fp chooses the frame-pointer walk.
 */
void localstack__init(bool use_fp);

/* The frame-pointer walk into @ip[@max]; returns the count. */
int localstack__walk_fp(void **ip, int max);

/*
 * Up to @max (<= 31) return addresses of the calling thread, call site of
 * the allocator first, in place in @buf (LOCALSTACK_BUF entries): *@frames
 * points at the first. *@cut is set true when the stack went on past @max
 * frames (the walk found one more), else false. Returns the count (0: none
 * found). Inline, so that the collector's caller is unwound through as few
 * of its own frames as the compiler leaves (each costs libunwind a step);
 * those there are are dropped by address, and nothing is copied.
 */
static inline __attribute__((always_inline)) int
localstack__capture(uint64_t *buf, int max, const uint64_t **frames, bool *cut)
{
	int n, k = 0;

	if (max > 31)
		max = 31;
	/* One frame more than kept: there, the stack is cut. */
	n = localstack_fp ? localstack__walk_fp((void **)buf, LOCALSTACK_SKIP_MAX + max + 1) :
		unw_backtrace((void **)buf, LOCALSTACK_SKIP_MAX + max + 1);
	while (k < n && k < LOCALSTACK_SKIP_MAX && buf[k] >= localstack_self_start &&
	       buf[k] < localstack_self_end)
		k++;
	*frames = buf + k;
	*cut = n - k > max;
	return n - k > max ? max : n - k;
}

#endif /* HEAPSNOOP_COLLECTOR_LOCALSTACK_H */

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

/* localstack__capture()'s *cut: the stack went on past the frames kept. */
#define LOCALSTACK_CUT_DEPTH (1u << 0)
/* ... or a frame's caller was not recovered: the stack stops early. */
#define LOCALSTACK_CUT_UNREADABLE (1u << 1)

/*
 * libunwind's walk into @ip[@max], frame by frame: the count. On x86-64
 * unw_backtrace() (its cached fast path); elsewhere unw_step() by hand,
 * because on aarch64, at a frame without CFI, libunwind's step can hand
 * back that frame again (same pc, same sp) and then stop, as if the stack
 * ended there: a step that gets nowhere, or fails, sets *@broken.
 */
static inline __attribute__((always_inline)) int
localstack__unwind(void **ip, int max, bool *broken)
{
#if defined(__x86_64__)
	*broken = false;
	return unw_backtrace(ip, max);
#else
	unw_word_t pc, sp, last_pc = 0, last_sp = 0;
	unw_context_t uc;
	unw_cursor_t c;
	int n = 0, r;

	*broken = false;
	if (unw_getcontext(&uc) || unw_init_local(&c, &uc))
		return 0;
	do {
		if (unw_get_reg(&c, UNW_REG_IP, &pc) || unw_get_reg(&c, UNW_REG_SP, &sp) ||
		    (n && pc == last_pc && sp == last_sp)) {
			*broken = true;
			break;
		}
		ip[n++] = (void *)pc;
		last_pc = pc;
		last_sp = sp;
		r = unw_step(&c);
		*broken = r < 0;
	} while (r > 0 && n < max);
	return n;
#endif
}

/*
 * Up to @max (<= 31) return addresses of the calling thread, call site of
 * the allocator first, in place in @buf (LOCALSTACK_BUF entries): *@frames
 * points at the first. *@cut gets LOCALSTACK_CUT_DEPTH when the stack went
 * on past @max frames (the walk found one more), LOCALSTACK_CUT_UNREADABLE
 * when libunwind could not go on to a frame's caller, else 0. Returns the
 * count (0: none found). Inline, so that the collector's caller is unwound
 * through as few of its own frames as the compiler leaves (each costs
 * libunwind a step); those there are are dropped by address, and nothing
 * is copied.
 */
static inline __attribute__((always_inline)) int
localstack__capture(uint64_t *buf, int max, const uint64_t **frames, unsigned int *cut)
{
	bool broken = false;
	int n, k = 0;

	if (max > 31)
		max = 31;
	/* One frame more than kept: there, the stack is cut. */
	n = localstack_fp ? localstack__walk_fp((void **)buf, LOCALSTACK_SKIP_MAX + max + 1) :
		localstack__unwind((void **)buf, LOCALSTACK_SKIP_MAX + max + 1, &broken);
	while (k < n && k < LOCALSTACK_SKIP_MAX && buf[k] >= localstack_self_start &&
	       buf[k] < localstack_self_end)
		k++;
	*frames = buf + k;
	*cut = n - k > max ? LOCALSTACK_CUT_DEPTH : broken ? LOCALSTACK_CUT_UNREADABLE : 0;
	return n - k > max ? max : n - k;
}

#endif /* HEAPSNOOP_COLLECTOR_LOCALSTACK_H */

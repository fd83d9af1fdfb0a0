// SPDX-License-Identifier: MIT
/*
 * unwinders.c - what one in-process stack walk costs, the choice behind
 * the preload collector's unwinder (docs/COLLECTOR.md): libunwind's
 * unw_backtrace (heaptrack's), libgcc's _Unwind_Backtrace (lws'), a
 * frame-pointer walk (only complete where every frame keeps one), and the
 * collector's own walk by CFI (user/collector/unwind/localstack.c, ehframe.c). Each walk
 * starts DEPTH calls deep and is repeated N times, all interleaved round by
 * round so that the load of other processes falls on each alike, timed by
 * the thread's CPU clock: on a shared machine the time a walk waited for a
 * core is not the walk's.
 *
 *   unwinders [N] [DEPTH]   prints "NAME ns-per-walk frames" per unwinder
 * Built twice by bench/collector.sh: with and without frame pointers.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unwind.h>

#include "localstack.h"

#define MAXF 64

struct ub_state {
	void **out;
	int n, max;
};

static _Unwind_Reason_Code ub_step(struct _Unwind_Context *ctx, void *arg)
{
	struct ub_state *s = arg;

	if (s->n >= s->max)
		return _URC_END_OF_STACK;
	s->out[s->n++] = (void *)_Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

static int walk_libgcc(void **out, int max)
{
	struct ub_state s = { out, 0, max };

	_Unwind_Backtrace(ub_step, &s);
	return s.n;
}

static int walk_libunwind(void **out, int max)
{
	return unw_backtrace(out, max);
}

static int walk_fp(void **out, int max)
{
	uintptr_t *fp = __builtin_frame_address(0);
	int n = 0;

	while (fp && n < max) {
		uintptr_t *next = (uintptr_t *)fp[0];

		out[n++] = (void *)fp[1];
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

static int walk_collector(void **out, int max)
{
	bool broken;

	return localstack__walk(out, max, &broken);
}

static int (*const walkers[])(void **, int) = { walk_libunwind, walk_libgcc, walk_fp,
						walk_collector };
static const char *const names[] = { "unw_backtrace", "_Unwind_Backtrace", "frame pointers",
				     "collector (CFI)" };
#define NW 4

static volatile int sink;

__attribute__((noinline)) static int descend(int depth, int w, void **out)
{
	int n;

	if (!depth)
		return walkers[w](out, MAXF);
	n = descend(depth - 1, w, out);
	sink += n;	/* no tail call: every level is a frame */
	return n;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int depth = argc > 2 ? atoi(argv[2]) : 12;
	double best[NW];
	int frames[NW];
	void *out[MAXF];

	for (int w = 0; w < NW; w++)
		best[w] = 1e30;
	for (int round = 0; round < 5; round++) {
		for (int w = 0; w < NW; w++) {
			double t0 = now_ns(), dt;

			for (long i = 0; i < n / 5; i++)
				frames[w] = descend(depth, w, out);
			dt = (now_ns() - t0) / (n / 5);
			if (dt < best[w])
				best[w] = dt;
		}
	}
	for (int w = 0; w < NW; w++)
		printf("%-18s %8.1f ns/walk %3d frames\n", names[w], best[w], frames[w]);
	return 0;
}

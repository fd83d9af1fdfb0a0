/* SPDX-License-Identifier: MIT */
/*
 * luasegs.h - a Lua walk's frames cut into the runs of the VM's
 * interpreter loop, one segment for each native frame of it, so that the
 * splice (splice.h) puts each segment where its luaV_execute frame is.
 * Issue 26's research checked the rules against the native stacks of
 * Debian's lua5.4 and lua5.1 (gdb, and heapsnoop with the debug files):
 *
 *   5.4: a run ends at a frame marked CIST_FRESH (luaV_execute was
 *        started for it: called from C, a metamethod, a finalizer, a
 *        coroutine's first resume) and at a thread's outermost frame;
 *   5.1: a run ends at a frame whose caller is not Lua, or whose caller's
 *        calling instruction is not OP_CALL or OP_TAILCALL (a metamethod,
 *        OP_TFORLOOP's iterator: luaD_call starts a new luaV_execute),
 *        and at a thread's outermost frame.
 *
 * C frames go with the run that called them: a segment is the C frames
 * above a run, then the run; a thread's C frames below its last run (lua.c's
 * pmain) go with that last run. A coroutine resumed after a yield has
 * its calls finished by lua_resume's unroll, one luaV_execute for the
 * innermost run only: when a thread has more runs than the native stack
 * has luaV_execute frames for it (counted between lua_resume's frames),
 * its outer runs are one segment.
 */
#ifndef HEAPSNOOP_LUASEGS_H
#define HEAPSNOOP_LUASEGS_H

#include <stdbool.h>
#include <stdint.h>

#include "interp/lua/luawalk.h"

struct lua_segs_in {
	const struct lua_frame *f;	/* the walk's frames, innermost first */
	uint32_t nf;
	bool v51;			/* 5.1's rule, else 5.4's */
	/*
	 * 5.1: is the calling instruction of Lua frame @caller (at its saved
	 * pc) OP_CALL or OP_TAILCALL? NULL: take it as one.
	 */
	bool (*calls)(void *ctx, const struct lua_frame *caller);
	void *ctx;
	/*
	 * The luaV_execute frames of each thread on the native stack,
	 * innermost thread first (@nthreads of them); NULL: not counted (a
	 * cut native walk), no runs merged.
	 */
	const uint32_t *evals;
	uint32_t nthreads;
};

/*
 * The segments of @in: segment k is frames [seg_end[k-1], seg_end[k])
 * (seg_end[-1] = 0), at most @max. Returns how many.
 */
uint32_t lua_segs(const struct lua_segs_in *in, uint32_t *seg_end, uint32_t max);

#endif /* HEAPSNOOP_LUASEGS_H */

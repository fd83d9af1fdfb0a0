// SPDX-License-Identifier: MIT
/* luasegs.c - a Lua walk's frames in runs of the interpreter loop (see luasegs.h). */
#include "heapsnoop/luaframe.h"
#include "interp/lua/luasegs.h"

static bool is_lua(const struct lua_frame *f)
{
	return HS_LUA_POS_KIND(f->pos) == HS_LUA_LUA;
}

/* Is frame @i the last of its thread? */
static bool thread_ends(const struct lua_segs_in *in, uint32_t i)
{
	return i + 1 >= in->nf || (in->f[i + 1].pos & HS_LUA_F_THREAD);
}

/* Does Lua frame @i end its run (its caller, frame @i + 1, is of another)? */
static bool run_ends(const struct lua_segs_in *in, uint32_t i)
{
	const struct lua_frame *f = &in->f[i], *c = &in->f[i + 1];

	if (thread_ends(in, i))
		return true;
	if (!in->v51)
		return f->pos & HS_LUA_F_FRESH;
	return !is_lua(c) || (in->calls && !in->calls(in->ctx, c));
}

/* Are frames (@i, the end of its thread] all C frames? */
static bool only_c_below(const struct lua_segs_in *in, uint32_t i)
{
	for (uint32_t j = i + 1; j < in->nf && !(in->f[j].pos & HS_LUA_F_THREAD); j++)
		if (is_lua(&in->f[j]))
			return false;
	return true;
}

uint32_t lua_segs(const struct lua_segs_in *in, uint32_t *seg_end, uint32_t max)
{
	uint32_t n = 0, t = 0, first = 0;
	bool pending = false;

	for (uint32_t i = 0; i < in->nf; i++) {
		if (is_lua(&in->f[i]) && run_ends(in, i)) {
			/* A thread's C frames below its last run go with that run. */
			if (!thread_ends(in, i) && only_c_below(in, i))
				pending = true;
			else if (n < max)
				seg_end[n++] = i + 1;
		}
		if (!thread_ends(in, i))
			continue;
		if (pending && n < max)
			seg_end[n++] = i + 1;
		pending = false;
		/*
		 * A thread without a run (a coroutine running a C function)
		 * leaves its frames to the next segment. One with more runs
		 * than luaV_execute frames: its outer runs as one segment.
		 */
		if (in->evals && t < in->nthreads && in->evals[t] && n - first > in->evals[t]) {
			seg_end[first + in->evals[t] - 1] = seg_end[n - 1];
			n = first + in->evals[t];
		}
		t++;
		first = n;
	}
	return n;
}

/* SPDX-License-Identifier: MIT */
/*
 * ljwalk.h - a LuaJIT 2.1 state's frames read as the BPF side reads them
 * at an allocation (user/interp/luajit/luajit.bpf.h), the same walk over a reader: cur_L from
 * the main thread's global_State, the chain of resumes from the main
 * thread to it, then each thread's frame links from L->base down,
 * innermost thread first, each frame as include/heapsnoop/luaframe.h
 * says (LuaJIT's link types in HS_LJ_LINK). For the collector, which
 * reads its own process, and for tests/interp/test_ljbpf.c, which checks
 * the BPF side's walk word for word against it on a live luajit.
 */
#ifndef HEAPSNOOP_LJWALK_H
#define HEAPSNOOP_LJWALK_H

#include <stdint.h>

#include "interp/lua/luaproto.h"
#include "interp/lua/luawalk.h"

/*
 * The frames of the LuaJIT state whose main thread is @main, innermost
 * first, into @out (at most @max). Returns how many, or -EFAULT: a
 * thread or a frame could not be read (the frames before it are in @out,
 * *@n of them).
 */
int lj_walk(const struct lua_reader *rd, uint64_t main, struct lua_frame *out, unsigned int max,
	    unsigned int *n);

#endif /* HEAPSNOOP_LJWALK_H */

/* SPDX-License-Identifier: MIT */
/*
 * luawalk.h - a Lua state's frames read as the BPF side reads them at an
 * allocation (user/interp/lua/lua.bpf.h), the same walk over a reader: from the main
 * thread, the running coroutine found by following each thread's running
 * C function when it is coroutine.resume (its first argument) or a
 * coroutine.wrap function (its one upvalue) and that thread is running or
 * normal (status OK, a call under way); then each thread's CallInfos,
 * innermost thread first, each frame as include/heapsnoop/luaframe.h says.
 * For the collector, which reads its own process, and for the tests,
 * which check the BPF side's encoding and the loader's names against a
 * live interpreter's own traceback.
 */
#ifndef HEAPSNOOP_LUAWALK_H
#define HEAPSNOOP_LUAWALK_H

#include <stdint.h>

#include "interp/lua/luaproto.h"

/* Coroutines followed at most (the BPF walk's too). */
#define LUA_WALK_THREADS 8

struct lua_frame {
	uint64_t code, pos;	/* luaframe.h */
};

/*
 * The frames of the state whose main thread is @main, innermost first,
 * into @out (at most @max). Returns how many, or -EFAULT: a thread or a
 * call could not be read (the frames before it are in @out, *@n of them).
 */
int lua_walk(const struct lua_reader *rd, uint64_t main, struct lua_frame *out,
	     unsigned int max, unsigned int *n);

/*
 * Is @addr a thread of a state (its tag a thread's, its global_State's
 * main thread a thread of that same global_State)? Then its state's main
 * thread into *@main and global_State into *@g. Returns 0, or -ENOENT:
 * not one (what an address found by a scan usually is).
 */
int lua_state__main(const struct lua_reader *rd, uint64_t addr, uint64_t *main, uint64_t *g);

#endif /* HEAPSNOOP_LUAWALK_H */

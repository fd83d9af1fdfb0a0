/* SPDX-License-Identifier: MIT */
/*
 * luaharness.h - what the Lua walk tests (test_lua, test_luabpf,
 * test_ljbpf) share: Debian's lua5.4, lua5.1 or luajit run on
 * tests/interp/lua/chain.lua, which waits on stdin where its call chain
 * is deepest; its memory read from outside; its state found in its stack;
 * and, for the BPF tests, tests/interp/luawalk.bpf.c's walk at its next
 * read(0), checked word for word against the loader's.
 */
#ifndef HEAPSNOOP_TESTS_LUAHARNESS_H
#define HEAPSNOOP_TESTS_LUAHARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "heapsnoop/luaframe.h"
#include "interp/lua/lualayout.h"
#include "interp/lua/luawalk.h"

struct bpf_object;

/* An interpreter running chain.lua: its pid, its stdout, its stdin's writing end. */
struct lua_child {
	pid_t pid;
	FILE *out;
	int in;
};

/*
 * lua_child__start - run @lua (a path) on @chain (chain.lua's absolute
 * path) with the argument "block"; luajit (a path naming it) with -joff,
 * from chain.lua's folder (LuaJIT's traceback cuts a long file name).
 * Returns 0, or -1 when @lua is not installed or no pipe could be made.
 * The child is killed by lua_child__teardown() if a check fails first.
 */
int lua_child__start(struct lua_child *c, const char *lua, const char *chain);

/*
 * lua_child__chain_arg - chain.lua's absolute path: the test's one
 * argument (argv[1] of @argc). Anything else: the usage said, exit 2.
 */
const char *lua_child__chain_arg(int argc, char **argv);

/* lua_child__stop - kill the child, reap it, close its pipes. */
void lua_child__stop(struct lua_child *c);

/* lua_child__teardown - a cmocka teardown: kills a child a failed check left running. */
int lua_child__teardown(void **state);

/*
 * lua_child__traceback - the lines chain.lua writes up to READY: those of
 * its "stack traceback:" (tab dropped) into @tb (up to @max of them;
 * @tb may be NULL when @max is 0). Returns how many, or -1 when the
 * output ended before READY.
 */
int lua_child__traceback(struct lua_child *c, char tb[][512], int max);

/*
 * lua_child__read - a struct lua_reader's read: @len bytes at @addr of
 * the process whose pid @ctx points to (process_vm_readv). 0, or -EFAULT.
 */
int lua_child__read(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * lua_child__main - the state's main thread: the first word of the
 * process's [stack] that is one (lua_state__main for @vm LUA_VM_54 or
 * LUA_VM_51, its global_State into *@g; lj_state__main with Debian 12's
 * LuaJIT layout for LUA_VM_JIT, *@g untouched). 0 if none is.
 */
uint64_t lua_child__main(const struct lua_reader *rd, pid_t pid, enum lua_vm vm, uint64_t *g);

/* What luawalk.bpf.c keeps in walk_result: a walk's frames, two words each. */
struct lua_bpf_result {
	uint32_t hits, n, flags, pad;
	uint64_t w[2 * HS_LUA_MAX_FRAMES];
};

/*
 * lua_child__bpf_walk - have the loaded luawalk.bpf.c @obj (its
 * target_tgid set to @c's pid) walk the state @lp at @c's next read(0):
 * @lp into walk_cfg, at_read attached to the C library's read(), half a
 * line written (read() returns it and the C library reads again), until
 * walk_done says the walk is done. Returns walk_result's value (a static
 * buffer, valid until the next call); a failure fails the test.
 */
const struct lua_bpf_result *lua_child__bpf_walk(struct lua_child *c, struct bpf_object *obj,
						 const struct hs_lua_proc *lp);

/*
 * lua_bpf_result__check - the BPF walk @res is the loader's @f (@n
 * frames) word for word, without a flag, and went past one coroutine
 * into its resumer (one frame with HS_LUA_F_THREAD). Says both counts
 * for @lua; a difference fails the test.
 */
void lua_bpf_result__check(const struct lua_bpf_result *res, const struct lua_frame *f,
			   unsigned int n, const char *lua);

#endif /* HEAPSNOOP_TESTS_LUAHARNESS_H */

/* SPDX-License-Identifier: MIT */
/*
 * luainterp.h - what the two Lua rooms' rows (lua/luainterp.c for PUC
 * Lua, luajit/ljinterp.c for LuaJIT; ops.h) share: their walk's entry in
 * the BPF side (struct hs_lua_proc), the state found (lua_newstate's
 * return, kept by the BPF side, or an allocation's registers and stack),
 * a frame's text given its address in the records. Each room's process
 * state is asked through a struct lua_room.
 */
#ifndef HEAPSNOOP_LUAINTERP_H
#define HEAPSNOOP_LUAINTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/interpframe.h"
#include "interp/interp_int.h"
#include "interp/lua/luanames.h"

/* A Lua room's process state (struct lua_proc, struct lj_proc) as the shared steps ask it. */
struct lua_room {
	bool (*has_state)(const void *vm);
	/* 0, or -ENOENT: not a state (lua_proc__set_state(), lj_proc__set_state()). */
	int (*set_state)(void *vm, uint64_t main, uint32_t tid);
	/* Among @n words: 0, or -ENOENT (lua_proc__find_state(), lj_proc__find_state()). */
	int (*find_state)(void *vm, const uint64_t *words, size_t n, uint32_t tid);
	void (*bpf)(const void *vm, struct hs_lua_proc *out);
};

/* @vm's entry in the BPF side's interp_procs, into @cfg. */
void lua_room__config(const struct interp *ip, const struct lua_room *r, const void *vm,
		      struct hs_interp_proc *cfg);

/*
 * @p's state (@vm, asked through @r), if known; else found now:
 * lua_newstate's return, which the BPF side kept (launch mode), or the
 * registers and stack of allocation @ev (-p: a thread of the state is in
 * one of them), then registered for the next allocations. False: not yet.
 */
bool lua_room__state(struct interp *ip, struct iproc *p, const struct lua_room *r, void *vm,
		     const struct hs_event *ev);

/* lua_intern_fn (both Lua rooms'): a Lua frame's text, its address in process @pid's records. */
struct lua_intern_ctx {
	struct interp *ip;
	pid_t pid;
};
uint64_t lua_room__intern(void *ctx, const struct lua_where *w);
/* lua_rename_fn (PUC Lua's): the same context. */
void lua_room__rename(void *ctx, uint64_t old, uint64_t new);

/* lua/luainterp.c: PUC Lua's row. */
extern const struct interp_ops interp_lua_ops;

#endif /* HEAPSNOOP_LUAINTERP_H */

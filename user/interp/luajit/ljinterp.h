/* SPDX-License-Identifier: MIT */
/*
 * ljinterp.h - LuaJIT's row of the table of runtimes (ops.h, ljinterp.c),
 * and its look: a LuaJIT is found by Lua's (luafind.c tells PUC Lua from
 * LuaJIT in one search of a file), which hands it over here.
 */
#ifndef HEAPSNOOP_LJINTERP_H
#define HEAPSNOOP_LJINTERP_H

#include <stdbool.h>
#include <stdint.h>

#include "interp/interp_int.h"
#include "interp/lua/luafind.h"

extern const struct interp_ops interp_luajit_ops;

/*
 * LuaJIT in @p's file @path (@shown: as the process names it; mapped
 * with @bias), found by Lua's look at @when: its allocator probed, said;
 * true (read, or refused and said).
 */
bool interp__look_luajit(struct interp *ip, struct iproc *p, const char *path, const char *shown,
			 const struct lua_vm_info *vm, uint64_t bias, enum interp_when when);

#endif /* HEAPSNOOP_LJINTERP_H */

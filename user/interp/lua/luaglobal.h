/* SPDX-License-Identifier: MIT */
/*
 * luaglobal.h - the global names of a Lua 5.4 state's functions, as its
 * traceback finds them (lauxlib.c's pushglobalfuncname and findfield):
 * each function reachable from package.loaded in two steps by string
 * keys, in lua_next's order (a table's array part, then its nodes), the
 * first name found for it kept, "_G." dropped: "string.rep", "mod.leaf",
 * "pcall". 5.1's traceback has no global names.
 *
 * Lua compares the running function with those values; read from
 * outside, a frame is known by its prototype (Lua functions) or its C
 * function, so a prototype with several closures is named by the one in
 * package.loaded for all of them. The table is a snapshot: rebuilt by
 * the caller when it may have changed (a module loaded since).
 */
#ifndef HEAPSNOOP_LUAGLOBAL_H
#define HEAPSNOOP_LUAGLOBAL_H

#include <stdint.h>

#include "interp/lua/luaproto.h"

/* Nodes of one table read at most (2^16: a larger table is not walked). */
#define LUA_GLOBAL_MAX_LSIZENODE 16

struct lua_globals;

/*
 * Walk the package.loaded of the state whose global_State is at @g.
 * Returns 0 with *@out (free with lua_globals__free), -EFAULT (no
 * registry or package.loaded readable: the libraries are not open yet),
 * -ENOTSUP (not 5.4), -ENOMEM.
 */
int lua_globals__build(const struct lua_reader *rd, uint64_t g, struct lua_globals **out);
void lua_globals__free(struct lua_globals *gl);

/*
 * The global name of the Lua function of prototype @proto, or of the C
 * function @cfunc (@proto 0); NULL if it has none. Lives as long as @gl.
 */
const char *lua_globals__name(const struct lua_globals *gl, uint64_t proto, uint64_t cfunc);

/* How many functions it names. */
unsigned int lua_globals__count(const struct lua_globals *gl);

#endif /* HEAPSNOOP_LUAGLOBAL_H */

/* SPDX-License-Identifier: MIT */
/*
 * ljnames.h - a LuaJIT state's frames (luaframe.h's words, from the BPF
 * side's walk, user/interp/luajit/luajit.bpf.h) told as LuaJIT's own traceback tells them
 * (lj_debug.c's luaL_traceback): the function "function 'NAME'" when its
 * caller's calling instruction names it (any kind: local, global, field,
 * method, upvalue, metamethod '__index'), else "main chunk", "function
 * <chunk:line>", a C function's "at 0xADDR"; the chunk (a fast function
 * without a name: "[builtin#N]"; C: "[C]") and the line. Prototypes read
 * once (ljproto.h), kept by address.
 */
#ifndef HEAPSNOOP_LJNAMES_H
#define HEAPSNOOP_LJNAMES_H

#include "interp/lua/luanames.h"
#include "interp/lua/luawalk.h"

struct lj_names;

/* Names read through @rd (copied). NULL: no memory. */
struct lj_names *lj_names__new(const struct lua_reader *rd);
void lj_names__free(struct lj_names *n);

/*
 * Frame @i of the @nf frames @f (innermost first) into @w. Returns 0, or
 * -ESTALE: its prototype could not be read (@w says "?" in "?").
 */
int lj_names__describe(struct lj_names *n, const struct lua_frame *f, unsigned int nf,
		       unsigned int i, struct lua_where *w);

/* Prototypes kept; those that could not be read. */
void lj_names__stats(const struct lj_names *n, unsigned int *protos, unsigned int *stale);

#endif /* HEAPSNOOP_LJNAMES_H */

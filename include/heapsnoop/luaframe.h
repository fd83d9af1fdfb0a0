/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * luaframe.h - a Lua frame as a walk sends it (the BPF side's, bpf/lua.h,
 * and the loader's own, user/common/interp/luawalk.c): the two words of an
 * interpreter frame (code, pos), innermost first, the running coroutine's
 * frames first and then each resumer's, as Tarantool's backtraces give a
 * coroutine's ancestors.
 *
 *   code: the function's prototype (a Lua function: Proto *, LuaJIT's
 *         GCproto *), or its C function (a light C function, a C
 *         closure's), or LuaJIT's fast function number (HS_LUA_FAST);
 *   pos:  bits 0-47 the frame's saved pc (the address of its next
 *         instruction; 0: none), bits 48-55 its kind (HS_LUA_*), bits
 *         56-63 its flags (HS_LUA_F_*).
 *
 * docs/DESIGN.md, "Interpreter frames".
 */
#ifndef HEAPSNOOP_LUAFRAME_H
#define HEAPSNOOP_LUAFRAME_H

/* kinds */
#define HS_LUA_LUA	1	/* a Lua function: code is its prototype */
#define HS_LUA_C	2	/* a light C function: code is it */
#define HS_LUA_CCL	3	/* a C closure: code is its function */
#define HS_LUA_FAST	4	/* LuaJIT's fast function: code is its number */

/* flags */
#define HS_LUA_F_FRESH	(1ULL << 56)	/* 5.4 CIST_FRESH: a new luaV_execute ran it */
#define HS_LUA_F_TAIL	(1ULL << 57)	/* tail called (5.1: tail calls lost above it) */
#define HS_LUA_F_FIN	(1ULL << 58)	/* called as a finalizer */
#define HS_LUA_F_HOOKED	(1ULL << 59)	/* called inside a hook */
#define HS_LUA_F_THREAD	(1ULL << 60)	/* the first frame of a resumer: a coroutine ends above */
#define HS_LUA_F_CCALL	(1ULL << 61)	/* 5.1/LuaJIT: called from C (a new run of the VM) */

#define HS_LUA_PC_MASK		((1ULL << 48) - 1)
#define HS_LUA_POS(pc, kind, flags) \
	(((pc) & HS_LUA_PC_MASK) | ((unsigned long long)(kind) << 48) | (flags))
#define HS_LUA_POS_PC(pos)	((pos) & HS_LUA_PC_MASK)
#define HS_LUA_POS_KIND(pos)	((unsigned int)((pos) >> 48) & 0xff)
#define HS_LUA_POS_FLAGS(pos)	((pos) & (0xffULL << 56))

#endif /* HEAPSNOOP_LUAFRAME_H */

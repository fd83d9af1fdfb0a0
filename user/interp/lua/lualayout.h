/* SPDX-License-Identifier: MIT */
/*
 * lualayout.h - where a Lua VM keeps what a traceback needs, for reading
 * it from outside the process (the tracer, through process_vm_readv) or
 * from inside (the collector): lua_State, CallInfo, closures, Proto,
 * strings, tables, global_State, and the type tags in a value. One table
 * per VM: PUC Lua 5.4 and 5.1, LuaJIT 2.1 (GC64).
 *
 * Source: each struct of Debian 12's builds (lua5.4 5.4.4-3+deb12u1,
 * lua5.1 5.1.5-9, luajit 2.1.0~beta3+git20220320) as gdb's `ptype /o`
 * prints it from the liblua5.x-0-dbg files, and offsetof() against those
 * packages' sources (lstate.h, lobject.h, lj_obj.h, lj_frame.h); the same
 * on every LP64 machine (x86-64, arm64) and for every build of those
 * versions that keeps luaconf.h's structure options (LUAI_EXTRASPACE 0,
 * lua_Number double). docs/DESIGN.md, "Interpreter frames".
 */
#ifndef HEAPSNOOP_LUALAYOUT_H
#define HEAPSNOOP_LUALAYOUT_H

#include <stdint.h>

enum lua_vm {
	LUA_VM_NONE = 0,
	LUA_VM_54,	/* PUC Lua 5.4 */
	LUA_VM_51,	/* PUC Lua 5.1 */
	LUA_VM_JIT,	/* LuaJIT 2.1, GC64 */
};

/* Offsets in bytes; 0 where a VM has no such field (said below). */
struct lua_layout {
	enum lua_vm vm;
	const char *name;		/* "Lua 5.4" */
	/* lua_State */
	uint16_t l_size;
	uint16_t l_tt, l_status, l_g, l_ci, l_stack;
	uint16_t l_base_ci;		/* 5.4: CallInfo embedded here; 5.1: a pointer */
	uint16_t l_savedpc;		/* 5.1: the running function's pc */
	/* CallInfo */
	uint16_t ci_size, ci_func, ci_previous, ci_savedpc, ci_callstatus, ci_tailcalls;
	/* values: TValue's size, its tag's offset and width (1: 5.4's byte, 4: 5.1's int) */
	uint16_t tv_size, tv_tt, tv_tt_size;
	/* tags as a value holds them */
	uint32_t tag_lua, tag_lcf, tag_ccl, tag_thread, tag_shrstr, tag_lngstr, tag_table;
	uint32_t tag_proto;		/* a Proto's own tt byte */
	/* closures: Lua closure's Proto, C closure's function and upvalues */
	uint16_t cl_isc;		/* 5.1: isC (a byte) */
	uint16_t cl_nup, lcl_p, ccl_f, ccl_upvalue;
	/* Proto */
	uint16_t p_size;
	uint16_t p_sizeupvalues, p_sizek, p_sizecode, p_sizelineinfo, p_sizep, p_sizelocvars;
	uint16_t p_sizeabslineinfo, p_linedefined, p_lastlinedefined, p_nups;
	uint16_t p_k, p_code, p_p, p_upvalues, p_lineinfo, p_abslineinfo, p_locvars, p_source;
	uint16_t upvaldesc_size;	/* 5.4: Upvaldesc (name first); 5.1: TString * */
	/* TString: 5.4's short length byte, the long (5.1: every) length, the bytes */
	uint16_t s_shrlen, s_len, s_data;
	/* Table and its Node */
	uint16_t t_lsizenode, t_node, node_size, node_val_tt, node_key_tt, node_key;
	/* global_State */
	uint16_t g_registry, g_mainthread, g_frealloc;
	/* the main thread's global_State: at main + l_to_g (LG, GG) */
	uint16_t l_to_g;
};

/* CallInfo.callstatus bits of 5.4 (lstate.h). */
#define LUA54_CIST_C		(1u << 1)
#define LUA54_CIST_FRESH	(1u << 2)
#define LUA54_CIST_HOOKED	(1u << 3)
#define LUA54_CIST_TAIL		(1u << 5)
#define LUA54_CIST_FIN		(1u << 7)

/* The layout of @vm, NULL for LUA_VM_NONE. */
const struct lua_layout *lua_layout__of(enum lua_vm vm);

#endif /* HEAPSNOOP_LUALAYOUT_H */

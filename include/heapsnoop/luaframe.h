/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * luaframe.h - a Lua frame as a walk sends it (the BPF side's, user/interp/lua/lua.bpf.h,
 * and the loader's own, user/interp/lua/luawalk.c): the two words of an
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

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

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
#define HS_LUA_F_TRACE	(1ULL << 62)	/* LuaJIT: the walk began in a compiled trace */
#define HS_LUA_F_CORO	(1ULL << 63)	/* LuaJIT: the walk's thread is a coroutine (resumers not read) */
/*
 * LuaJIT: bits 56-58 (5.4's FRESH, TAIL, FIN: not LuaJIT's) hold how the
 * frame was called, its frame link's type (lj_frame.h's FRAME_LUA,
 * FRAME_C, FRAME_CONT, FRAME_CP, FRAME_PCALL, FRAME_PCALLH; FRAME_VARG's
 * pseudo-frames are not sent). A fast function's pos has its entry's
 * address where a Lua function's has its pc.
 */
#define HS_LJ_LINK_SHIFT	56
#define HS_LJ_LINK(pos)		((unsigned int)((pos) >> HS_LJ_LINK_SHIFT) & 7)
#define HS_LJ_FRAME_LUA		0
#define HS_LJ_FRAME_C		1
#define HS_LJ_FRAME_CONT	2
#define HS_LJ_FRAME_VARG	3
#define HS_LJ_FRAME_CP		5
#define HS_LJ_FRAME_PCALL	6
#define HS_LJ_FRAME_PCALLH	7

#define HS_LUA_PC_MASK		((1ULL << 48) - 1)
#define HS_LUA_POS(pc, kind, flags) \
	(((pc) & HS_LUA_PC_MASK) | ((unsigned long long)(kind) << 48) | (flags))
#define HS_LUA_POS_PC(pos)	((pos) & HS_LUA_PC_MASK)
#define HS_LUA_POS_KIND(pos)	((unsigned int)((pos) >> 48) & 0xff)
#define HS_LUA_POS_FLAGS(pos)	((pos) & (0xffULL << 56))

/* Frames a walk reads at most (a power of two). */
#define HS_LUA_MAX_FRAMES 128

/* Threads (the main one and coroutines) a walk follows at most. */
#define HS_LUA_THREADS 8

/* HS_LUA_* VMs (struct hs_lua_proc's vm) */
#define HS_LUA_VM_54	1
#define HS_LUA_VM_51	2
#define HS_LUA_VM_JIT	3	/* LuaJIT 2.1, GC64 (two-slot frames) */

/*
 * A Lua state in a process: what the BPF side's walk needs, set by the
 * loader from the interpreter it found (user/interp/lua/lualayout.c's
 * offsets, in bytes) and the state's main thread (a uretprobe of
 * lua_newstate, or a scan of the running process). The walk runs only on
 * @owner, the thread that runs the state: a state is one thread's.
 */
struct hs_lua_proc {
	__u64 main;		/* the main thread's lua_State; 0: not known yet */
	__u32 owner;		/* the thread that runs it (its id) */
	__u32 vm;		/* HS_LUA_VM_* */
	/* lua_State: ci, status, 5.1's savedpc, base_ci (5.4: in it; 5.1: a pointer) */
	__u16 l_ci, l_status, l_savedpc, l_base_ci;
	/* CallInfo: its size, func, previous (5.4), savedpc, 5.4's callstatus, 5.1's tailcalls */
	__u16 ci_size, ci_func, ci_previous, ci_savedpc, ci_callstatus, ci_tailcalls;
	/* closures: 5.1's isC, upvalue count, a Lua one's Proto, a C one's function, its first upvalue */
	__u16 cl_isc, cl_nup, lcl_p, ccl_f, ccl_upvalue;
	/* a value's tag: its offset, 1 (5.4's byte) or 4 (5.1's int) bytes */
	__u16 tv_tt, tv_tt_size;
	__u8 tag_lua, tag_lcf, tag_ccl, tag_thread;	/* tags in a value */
	__u8 thread_tt;					/* a thread object's own tt */
	__u8 pad[7];
	/*
	 * LuaJIT: lua_State's glref, base, stack, cframe; global_State's
	 * cur_L, vmstate, jit_base; a cframe's saved pc; GCfunc's ffid, pc
	 * and C function (lualayout.h's).
	 */
	__u16 lj_l_g, lj_l_base, lj_l_stack, lj_l_cframe;
	__u16 lj_g_cur_l, lj_g_vmstate, lj_g_jit_base, lj_cf_pc;
	__u16 lj_fn_ffid, lj_fn_pc, lj_fn_f, lj_proto_size;
};

#endif /* HEAPSNOOP_LUAFRAME_H */

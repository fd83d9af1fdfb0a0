/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * luajit.h - a LuaJIT 2.1 state's frames at an allocation, read in BPF
 * (GC64 builds: two-slot frames, lj_frame.h's LJ_FR2; the offsets the
 * loader's, struct hs_lua_proc's lj_* in include/heapsnoop/luaframe.h),
 * each frame as luaframe.h's two words.
 *
 * The running thread is global_State's cur_L (LuaJIT keeps it; PUC Lua
 * does not), reached from the main thread's glref. Its frames from
 * L->base down to its stack's bottom, as lj_debug.c's lj_debug_frame
 * walks them: the slot below base holds the frame link, the one below
 * it the function. A link with its low two bits 0 is a Lua frame's
 * return pc (its caller's pc, the caller below by the call instruction's
 * A operand, read at pc - 4); else a delta to the frame below tagged
 * with the type (C, continuation, vararg, cpcall, pcall), a
 * continuation holding its caller's pc two slots down. Vararg
 * pseudo-frames and dummy frames are not sent (lj_debug_frame skips
 * them). The innermost Lua frame's pc is the one the VM saved in its C
 * frame (L->cframe's saved pc) before it called out. In a compiled trace
 * (global vmstate >= 0, with the JIT on) L->base is stale: the walk
 * starts at jit_base, the trace's start, and says so (HS_LUA_F_TRACE).
 *
 * Coroutines: LuaJIT keeps no link to a coroutine's resumer (its own
 * traceback stops at the coroutine's first frame). As lua.h does for PUC
 * Lua, the chain of resumes is followed from the main thread: while a
 * thread's running function (its top frame, below its base) has a thread
 * as its first argument (coroutine.resume) or as its first upvalue (a
 * coroutine.wrap function), that thread was resumed by it; a chain that
 * reaches cur_L has each resumer's frames sent after its coroutine's,
 * the first marked HS_LUA_F_THREAD. One that does not (a coroutine
 * resumed from C, lua_resume) leaves the running thread's frames alone,
 * marked HS_LUA_F_CORO.
 *
 * Runs on 5.10's verifier as lua.h's walk: one global function a frame
 * over per-CPU state, bounded loops, fields taken at masked offsets.
 */
#ifndef HEAPSNOOP_BPF_LUAJIT_H
#define HEAPSNOOP_BPF_LUAJIT_H

#include "heapsnoop/luaframe.h"

/* A GC64 TValue's pointer bits (lj_obj.h's LJ_GCVMASK); a thread's tag above them (~LJ_TTHREAD). */
#define LJ_GCVMASK ((1ULL << 47) - 1)
#define LJ_TAG_THREAD 0x1fff9ULL

struct hs_lj_work {
	struct hs_lua_proc lp;		/* the state's, copied for the steps */
	__u8 l[128];			/* the running thread's lua_State */
	__u8 fn[64];			/* a function's header */
	__u64 slot[2];			/* a frame's function and link */
	__u64 L, f, bot, pc;		/* the thread, the frame walked, the stack's bottom, its pc */
	__u64 first;			/* flags of the next frame sent */
	__u64 th[HS_LUA_THREADS];	/* the chain of resumes: th[0] the main thread */
	__u64 cur;			/* cur_L */
	__u32 nth, t;			/* threads in the chain; the one walked */
	__u32 n, flags, done, max;	/* frames so far, HS_EVF_*, over, wanted at most */
	struct hs_lua_out out;		/* the frames */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_lj_work);
} lj_work_map SEC(".maps");

/* 8 bytes at @addr into *@v; false if unreadable. */
static __always_inline bool lj_u64(__u64 addr, __u64 *v)
{
	return !bpf_probe_read_user(v, sizeof(*v), (void *)addr);
}

/* Field @off (8 bytes) of the lua_State copy in @w. */
static __always_inline __u64 lj_l_field(const struct hs_lj_work *w, __u32 off)
{
	return *(const __u64 *)(w->l + (off & (sizeof(w->l) - 8) & ~7u));
}

/*
 * Walk thread @L next (a resumer: its first frame marked): its state
 * read into @w, its top frame and stack's bottom. Non-zero if unreadable.
 */
static __always_inline int lj_thread(struct hs_lj_work *w, __u64 L)
{
	if (!L || bpf_probe_read_user(w->l, sizeof(w->l), (void *)L))
		return -1;
	w->L = L;
	w->f = lj_l_field(w, w->lp.lj_l_base) - 8;
	w->bot = lj_l_field(w, w->lp.lj_l_stack) + 8;
	w->pc = 0;
	w->first = HS_LUA_F_THREAD;
	return 0;
}

/* One frame of the walk in @w, or its end. */
static __always_inline void lj_step(struct hs_lj_work *w)
{
	const struct hs_lua_proc *lp = &w->lp;
	__u64 f = w->f, func, ftsz, link, next, nextpc = 0, code, pos, entry;
	__u32 n = w->n, ins = 0, ffid;

	if (f <= w->bot || !f) {
		/* This thread's frames are done: its resumer's follow. */
		if (!w->t || lj_thread(w, w->th[(w->t - 1) & (HS_LUA_THREADS - 1)]))
			w->done = 1;
		else
			w->t--;
		return;
	}
	if (n >= w->max || n >= HS_LUA_MAX_FRAMES) {
		w->flags |= HS_EVF_TRUNCATED;
		w->done = 1;
		return;
	}
	if (bpf_probe_read_user(w->slot, sizeof(w->slot), (void *)(f - 8))) {
		w->flags |= HS_EVF_STACK_FAULT;
		w->done = 1;
		return;
	}
	func = w->slot[0] & LJ_GCVMASK;
	ftsz = w->slot[1];
	if (!(ftsz & 3)) {
		/* A Lua frame: its caller's pc; the caller's base by its call's A. */
		link = HS_LJ_FRAME_LUA;
		if (bpf_probe_read_user(&ins, sizeof(ins), (void *)(ftsz - 4))) {
			w->flags |= HS_EVF_STACK_FAULT;
			w->done = 1;
			return;
		}
		nextpc = ftsz;
		next = f - 8 * (2 + ((ins >> 8) & 0xff));
	} else {
		link = ftsz & 7;
		next = f - (ftsz & ~7ULL);
		if (link == HS_LJ_FRAME_CONT && !lj_u64(f - 16, &nextpc))
			nextpc = 0;
	}
	if (next >= f) {
		/* A link that does not go down: not a frame (the stack changed under us). */
		w->flags |= HS_EVF_STACK_FAULT;
		w->done = 1;
		return;
	}
	w->f = next;
	/* A vararg pseudo-frame: its function's real frame is below, with this pc. */
	if (link == HS_LJ_FRAME_VARG)
		return;
	if (func == w->L || bpf_probe_read_user(w->fn, sizeof(w->fn), (void *)func)) {
		w->pc = nextpc;		/* a dummy frame (lj_err's), or not a function */
		return;
	}
	ffid = (__u32)w->fn[lp->lj_fn_ffid & (sizeof(w->fn) - 1)];
	entry = *(const __u64 *)(w->fn + (lp->lj_fn_f & (sizeof(w->fn) - 8) & ~7u));
	pos = (link << HS_LJ_LINK_SHIFT) | w->first;
	w->first = 0;
	if (ffid == 0) {
		/* A Lua function: its prototype is just below its bytecode. */
		code = *(const __u64 *)(w->fn + (lp->lj_fn_pc & (sizeof(w->fn) - 8) & ~7u)) -
		       lp->lj_proto_size;
		pos |= HS_LUA_POS(w->pc, HS_LUA_LUA, 0);
	} else if (ffid == 1) {
		code = entry;
		pos |= HS_LUA_POS(0, HS_LUA_C, 0);
	} else {
		code = ffid;
		pos |= HS_LUA_POS(entry, HS_LUA_FAST, 0);
	}
	w->out.w[(2 * n) & (2 * HS_LUA_MAX_FRAMES - 1)] = code;
	w->out.w[(2 * n + 1) & (2 * HS_LUA_MAX_FRAMES - 1)] = pos;
	w->n = n + 1;
	w->pc = nextpc;
}

/* One step of the walk in this CPU's lj_work_map (as lua_walk_step: verified once). */
__attribute__((noinline)) int lj_walk_step(void)
{
	__u32 zero = 0;
	struct hs_lj_work *w = bpf_map_lookup_elem(&lj_work_map, &zero);

	if (!w)
		return 1;
	lj_step(w);
	return w->done;
}

/*
 * The thread the chain's last thread (w->th[w->nth - 1]) resumed: the
 * first argument of its running function, or that function's first
 * upvalue, if a thread; then it is added to the chain. Non-zero: none.
 */
__attribute__((noinline)) int lj_chain_step(void)
{
	__u32 zero = 0, i;
	struct hs_lj_work *w = bpf_map_lookup_elem(&lj_work_map, &zero);
	__u64 L, base, v = 0;

	if (!w)
		return 1;
	i = w->nth;
	if (i < 1 || i >= HS_LUA_THREADS)
		return 1;
	L = w->th[(i - 1) & (HS_LUA_THREADS - 1)];
	if (L == w->cur || bpf_probe_read_user(w->l, sizeof(w->l), (void *)L))
		return 1;
	base = lj_l_field(w, w->lp.lj_l_base);
	if (bpf_probe_read_user(w->slot, sizeof(w->slot), (void *)(base - 16)))
		return 1;
	if (!lj_u64(base, &v) || v >> 47 != LJ_TAG_THREAD) {
		/* A coroutine.wrap function: a C closure (ffid 1 or more), its thread its upvalue. */
		if (bpf_probe_read_user(w->fn, sizeof(w->fn), (void *)(w->slot[0] & LJ_GCVMASK)) ||
		    !w->fn[w->lp.lj_fn_ffid & (sizeof(w->fn) - 1)] ||
		    !w->fn[(w->lp.lj_fn_ffid + 1) & (sizeof(w->fn) - 1)] /* nupvalues */ ||
		    !lj_u64((w->slot[0] & LJ_GCVMASK) + w->lp.lj_fn_f + 8, &v) ||
		    v >> 47 != LJ_TAG_THREAD)
			return 1;
	}
	w->th[i & (HS_LUA_THREADS - 1)] = v & LJ_GCVMASK;
	w->nth = i + 1;
	return 0;
}

/*
 * The frames of the LuaJIT state @lp describes, into this CPU's @w
 * (@w->out, innermost first); @w->flags as lua_walk()'s. Returns how
 * many.
 */
static __always_inline __u32 lj_walk(const struct hs_lua_proc *lp, struct hs_lj_work *w,
				     __u32 max)
{
	__u64 g = 0, L = 0, base, cf, jb = 0;
	__s32 vmstate = -1;

	w->lp = *lp;
	w->flags = 0;
	w->n = 0;
	w->done = 0;
	w->max = max;
	w->first = 0;
	w->pc = 0;
	if (!lj_u64(lp->main + lp->lj_l_g, &g) || !lj_u64(g + lp->lj_g_cur_l, &L) ||
	    !(L &= LJ_GCVMASK))
		return 0;
	/* The chain of resumes from the main thread to the running one. */
	w->cur = L;
	w->th[0] = lp->main;
	w->nth = 1;
	for (int i = 0; i + 1 < HS_LUA_THREADS; i++)
		if (lj_chain_step())
			break;
	if (w->th[(w->nth - 1) & (HS_LUA_THREADS - 1)] != L) {
		w->th[0] = L;
		w->nth = 1;
		if (L != lp->main)
			w->first = HS_LUA_F_CORO;
	}
	w->t = w->nth - 1;
	if (bpf_probe_read_user(w->l, sizeof(w->l), (void *)L))
		return 0;
	w->L = L;
	base = lj_l_field(w, lp->lj_l_base);
	w->bot = lj_l_field(w, lp->lj_l_stack) + 8;
	bpf_probe_read_user(&vmstate, sizeof(vmstate), (void *)(g + lp->lj_g_vmstate));
	if (vmstate >= 0) {
		/* A compiled trace runs: L->base is the trace's start's, or jit_base. */
		if (lj_u64(g + lp->lj_g_jit_base, &jb) && jb)
			base = jb;
		w->first |= HS_LUA_F_TRACE;
	} else {
		cf = lj_l_field(w, lp->lj_l_cframe) & ~3ULL;
		/* The VM's saved pc; L itself there means none (a C call's entry). */
		if (cf && lj_u64(cf + lp->lj_cf_pc, &w->pc) && w->pc == L)
			w->pc = 0;
	}
	w->f = base - 8;
	for (int i = 0; i < 2 * HS_LUA_MAX_FRAMES; i++)
		if (lj_walk_step())
			break;
	return w->n;
}

#endif /* HEAPSNOOP_BPF_LUAJIT_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lua.h - a Lua state's frames at an allocation, read in BPF (PUC Lua 5.4
 * and 5.1; their offsets the loader's, struct hs_lua_proc in
 * include/heapsnoop/luaframe.h): what user/interp/lua/luawalk.c reads
 * from outside, the same way, each frame as luaframe.h's two words.
 *
 * From the state's main thread, the running coroutine: while a thread's
 * running call is a C function whose first argument (coroutine.resume)
 * or only upvalue (a coroutine.wrap function) is a thread that is running
 * or normal (status OK, a call under way: only those in the chain of
 * resumes are), that thread was resumed by it. Exact for the standard
 * library at any moment, attached mid-run included, without a probe on
 * lua_resume (+1.4 us a resume, docs/PERFORMANCE.md). Then each thread's
 * calls, the innermost thread first, down to its base CallInfo: one read
 * of the CallInfo, one of the function's value, one of a closure's
 * Proto or C function (5.1: its header) a frame.
 *
 * Runs on 5.10's verifier: bounded loops, every field taken from a copy
 * at a masked offset; the copies in @w, a map value (the walk's stack
 * would not hold them).
 */
#ifndef HEAPSNOOP_BPF_LUA_H
#define HEAPSNOOP_BPF_LUA_H

#include "heapsnoop/luaframe.h"

/* The walk's frames: luaframe.h's (code, pos), innermost first. */
struct hs_lua_out {
	__u64 w[2 * HS_LUA_MAX_FRAMES];
};

/*
 * What a walk reads into, per CPU (a map value), and its state between
 * two frames: kept here rather than in registers, whose exact values
 * the verifier would follow, so that every frame's paths end in one
 * state it has seen and the walk of 128 frames verifies once, not once
 * per way of getting there.
 */
struct hs_lua_work {
	struct hs_lua_proc lp;		/* the state's, copied for the steps */
	__u8 l[128];			/* a thread's first bytes */
	__u8 ci[64];			/* a CallInfo */
	__u8 cl[64];			/* a closure's header (5.1) */
	__u64 th_ci[HS_LUA_THREADS];	/* each thread's running CallInfo */
	__u64 th_base[HS_LUA_THREADS];	/* ... its base CallInfo */
	__u64 th_pc[HS_LUA_THREADS];	/* ... 5.1: its running call's pc */
	__u64 cur, base;		/* the CallInfo walked, its thread's base */
	__u64 first;			/* HS_LUA_F_THREAD for a resumer's first frame */
	__u32 th, n;			/* the thread walked (a slot), frames so far */
	__u32 flags, done;		/* HS_EVF_*; the walk is over */
	__u32 max, pad;			/* frames wanted at most */
	struct hs_lua_out out;		/* the frames */
};

/* The walk's work space, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_lua_work);
} lua_work_map SEC(".maps");

/* Field @off (@size bytes: 1, 2, 4, 8) of a copy of @cap bytes (a power of two). */
static __always_inline __u64 lua_field(const __u8 *buf, __u32 off, __u32 size, const __u32 cap)
{
	__u64 v = *(const __u64 *)(buf + (off & (cap - 8) & ~7u));

	v >>= (off & 7) * 8;
	if (size < 8)
		v &= (1ULL << (size * 8)) - 1;
	return v;
}

static __always_inline __u64 lua_read_u64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* A value's payload and tag at @addr; -1 if it cannot be read. */
static __always_inline int lua_read_tv(const struct hs_lua_proc *lp, __u64 addr, __u64 *value,
				       __u32 *tag)
{
	__u64 tv[2];

	if (bpf_probe_read_user(tv, sizeof(tv), (void *)addr))
		return -1;
	*value = tv[0];
	*tag = lp->tv_tt_size == 1 ? (__u32)(tv[1] & 0xff) : (__u32)tv[1];
	return 0;
}

/*
 * Thread @th's running CallInfo, base CallInfo and (5.1) running pc into
 * slot @i of @w; false if it is not a live thread (a running or normal
 * one: its tag, status OK, a call under way).
 */
static __always_inline bool lua_thread(const struct hs_lua_proc *lp, struct hs_lua_work *w,
				       __u64 th, __u32 i)
{
	__u64 ci, base;

	if (!th || bpf_probe_read_user(w->l, sizeof(w->l), (void *)th) ||
	    lua_field(w->l, 8, 1, sizeof(w->l)) != lp->thread_tt ||
	    lua_field(w->l, lp->l_status, 1, sizeof(w->l)) != 0)
		return false;
	ci = lua_field(w->l, lp->l_ci, 8, sizeof(w->l));
	base = lp->vm == HS_LUA_VM_54 ? th + lp->l_base_ci :
					lua_field(w->l, lp->l_base_ci, 8, sizeof(w->l));
	if (!ci || ci == base)
		return false;
	i &= HS_LUA_THREADS - 1;
	w->th_ci[i] = ci;
	w->th_base[i] = base;
	w->th_pc[i] = lp->vm == HS_LUA_VM_51 ? lua_field(w->l, lp->l_savedpc, 8, sizeof(w->l)) : 0;
	return true;
}

/* Read the CallInfo at @ci into @w; its function's value (and tag), -1 if unreadable. */
static __always_inline int lua_ci(const struct hs_lua_proc *lp, struct hs_lua_work *w, __u64 ci,
				  __u64 *func, __u64 *value, __u32 *tag)
{
	__u32 n = lp->ci_size;

	if (n > sizeof(w->ci))
		n = sizeof(w->ci);
	if (bpf_probe_read_user(w->ci, n, (void *)ci))
		return -1;
	*func = lua_field(w->ci, lp->ci_func, 8, sizeof(w->ci));
	return lua_read_tv(lp, *func, value, tag);
}

/*
 * Is the function value (@value, @tag) a C function? 5.4: a light C
 * function or a C closure by its tag; 5.1: a closure whose header (read
 * into @w->cl) says isC. *@nup: a C closure's upvalues.
 */
static __always_inline bool lua_is_c(const struct hs_lua_proc *lp, struct hs_lua_work *w,
				     __u64 value, __u32 tag, __u32 *nup)
{
	*nup = 0;
	if (lp->vm == HS_LUA_VM_54) {
		if (tag == lp->tag_ccl)
			*nup = (__u32)(lua_read_u64(value + (lp->cl_nup & ~7u)) >>
				       ((lp->cl_nup & 7) * 8)) & 0xff;
		return tag == lp->tag_lcf || tag == lp->tag_ccl;
	}
	if (tag != lp->tag_lua || bpf_probe_read_user(w->cl, sizeof(w->cl), (void *)value))
		return false;
	*nup = (__u32)lua_field(w->cl, lp->cl_nup, 1, sizeof(w->cl));
	return lua_field(w->cl, lp->cl_isc, 1, sizeof(w->cl)) != 0;
}

/*
 * The coroutine thread @i of @w resumed, if its running call is
 * coroutine.resume's or a coroutine.wrap function's and that thread is
 * live: then the thread is in slot @i + 1 and the walk returns true.
 */
static __always_inline bool lua_resumed(const struct hs_lua_proc *lp, struct hs_lua_work *w,
					__u32 i)
{
	__u64 func, value, co = 0;
	__u32 tag, t, nup;

	i &= HS_LUA_THREADS - 1;
	if (lua_ci(lp, w, w->th_ci[i], &func, &value, &tag) || !lua_is_c(lp, w, value, tag, &nup))
		return false;
	if (!lua_read_tv(lp, func + 16, &co, &t) && t == lp->tag_thread &&
	    lua_thread(lp, w, co, i + 1))
		return true;
	if (nup == 1 && !lua_read_tv(lp, value + lp->ccl_upvalue, &co, &t) &&
	    t == lp->tag_thread && lua_thread(lp, w, co, i + 1))
		return true;
	return false;
}

/* One frame of the walk in @w (its state there), or its end. */
static __always_inline void lua_step(const struct hs_lua_proc *lp, struct hs_lua_work *w,
				     struct hs_lua_out *out, __u32 max)
{
	__u64 ci = w->cur, func, value, code, pc, fl, st;
	__u32 tag, nup, th = w->th & (HS_LUA_THREADS - 1), n = w->n;

	if (ci == w->base || !ci) {
		/* This thread's calls are done: its resumer's follow. */
		if (!th) {
			w->done = 1;
			return;
		}
		th = (th - 1) & (HS_LUA_THREADS - 1);
		w->th = th;
		w->cur = w->th_ci[th];
		w->base = w->th_base[th];
		w->first = HS_LUA_F_THREAD;
		return;
	}
	if (n >= max || n >= HS_LUA_MAX_FRAMES) {
		w->flags |= HS_EVF_TRUNCATED;
		w->done = 1;
		return;
	}
	if (lua_ci(lp, w, ci, &func, &value, &tag)) {
		w->flags |= HS_EVF_STACK_FAULT;
		w->done = 1;
		return;
	}
	fl = w->first;
	w->first = 0;
	if (lp->vm == HS_LUA_VM_54) {
		/* CIST_FRESH (bit 2), CIST_HOOKED (3), CIST_TAIL (5), CIST_FIN (7). */
		st = lua_field(w->ci, lp->ci_callstatus, 2, sizeof(w->ci));
		fl |= ((st >> 2) & 1) * HS_LUA_F_FRESH | ((st >> 5) & 1) * HS_LUA_F_TAIL |
		      ((st >> 7) & 1) * HS_LUA_F_FIN | ((st >> 3) & 1) * HS_LUA_F_HOOKED;
	}
	if (lua_is_c(lp, w, value, tag, &nup)) {
		if (lp->vm == HS_LUA_VM_54 && tag == lp->tag_lcf) {
			code = value;
			pc = HS_LUA_POS(0, HS_LUA_C, fl);
		} else {
			code = lp->vm == HS_LUA_VM_51 ? lua_field(w->cl, lp->ccl_f, 8, sizeof(w->cl)) :
							lua_read_u64(value + lp->ccl_f);
			pc = HS_LUA_POS(0, HS_LUA_CCL, fl);
		}
	} else if (tag == lp->tag_lua) {
		if (lp->vm == HS_LUA_VM_51) {
			code = lua_field(w->cl, lp->lcl_p, 8, sizeof(w->cl));
			fl |= (__s32)lua_field(w->ci, lp->ci_tailcalls, 4, sizeof(w->ci)) > 0 ?
				      HS_LUA_F_TAIL : 0;
			/* The running call's pc is the thread's own. */
			pc = ci == w->th_ci[th] ? w->th_pc[th] :
						  lua_field(w->ci, lp->ci_savedpc, 8, sizeof(w->ci));
		} else {
			code = lua_read_u64(value + lp->lcl_p);
			pc = lua_field(w->ci, lp->ci_savedpc, 8, sizeof(w->ci));
		}
		pc = HS_LUA_POS(pc, HS_LUA_LUA, fl);
	} else {
		w->flags |= HS_EVF_STACK_FAULT;
		w->done = 1;
		return;
	}
	out->w[(2 * n) & (2 * HS_LUA_MAX_FRAMES - 1)] = code;
	out->w[(2 * n + 1) & (2 * HS_LUA_MAX_FRAMES - 1)] = pc;
	w->n = n + 1;
	/* 5.4: the previous link; 5.1: the CallInfo below in the array. */
	if (lp->vm == HS_LUA_VM_54)
		w->cur = lua_field(w->ci, lp->ci_previous, 8, sizeof(w->ci));
	else
		w->cur = ci > w->base ? ci - lp->ci_size : 0;
}

/*
 * One step of the walk in this CPU's lua_work_map: a global function, so
 * that the verifier checks it once, not once for each frame and each way
 * of getting there (128 frames inline took more than its million
 * instructions). Returns non-zero when the walk is over.
 */
__attribute__((noinline)) int lua_walk_step(void)
{
	__u32 zero = 0;
	struct hs_lua_work *w = bpf_map_lookup_elem(&lua_work_map, &zero);

	if (!w)
		return 1;
	lua_step(&w->lp, w, &w->out, w->max);
	return w->done;
}

/*
 * The frames of the state @lp describes, into this CPU's work space @w
 * (@w->out, innermost first); @w->flags gets HS_EVF_TRUNCATED (more
 * frames than @max) or HS_EVF_STACK_FAULT (a call could not be read).
 * Returns how many.
 */
static __always_inline __u32 lua_walk(const struct hs_lua_proc *lp, struct hs_lua_work *w,
				       __u32 max)
{
	__u32 th;

	w->lp = *lp;
	w->flags = 0;
	if (!lua_thread(lp, w, lp->main, 0))
		return 0;	/* no call under way: no Lua frames */
	w->th = 0;
	for (int i = 0; i + 1 < HS_LUA_THREADS; i++) {
		if (!lua_resumed(lp, w, (__u32)i))
			break;
		w->th = (__u32)i + 1;
	}
	th = w->th & (HS_LUA_THREADS - 1);
	w->cur = w->th_ci[th];
	w->base = w->th_base[th];
	w->first = 0;
	w->n = 0;
	w->done = 0;
	w->max = max;
	for (int i = 0; i < HS_LUA_MAX_FRAMES + HS_LUA_THREADS; i++)
		if (lua_walk_step())
			break;
	return w->n;
}

#endif /* HEAPSNOOP_BPF_LUA_H */

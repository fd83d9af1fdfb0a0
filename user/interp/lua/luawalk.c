// SPDX-License-Identifier: MIT
/*
 * luawalk.c - a Lua state's frames over a reader (see luawalk.h): the
 * loader's twin of user/interp/lua/lua.bpf.h's walk, read the same way: a thread's
 * running CallInfo (5.4: L->ci down the previous links to the embedded
 * base_ci; 5.1: L->ci down the CallInfo array to L->base_ci), its
 * function's value, a Lua closure's prototype, a C closure's function.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "heapsnoop/luaframe.h"
#include "interp/lua/luawalk.h"

static int rd64(const struct lua_reader *rd, uint64_t addr, uint64_t *v)
{
	return rd->read(rd->ctx, addr, v, 8);
}

/* A value's (payload, tag) at @addr. */
static int read_tv(const struct lua_reader *rd, uint64_t addr, uint64_t *value, uint32_t *tag)
{
	const struct lua_layout *l = rd->l;
	uint8_t tv[16];
	int err = rd->read(rd->ctx, addr, tv, l->tv_size);

	if (err)
		return err;
	memcpy(value, tv, 8);
	if (l->tv_tt_size == 1)
		*tag = tv[l->tv_tt];
	else
		memcpy(tag, tv + l->tv_tt, 4);
	return 0;
}

/* The thread's first CallInfo below which there is none (5.4: &L->base_ci). */
static int base_ci(const struct lua_reader *rd, uint64_t th, uint64_t *base)
{
	if (rd->l->vm == LUA_VM_54) {
		*base = th + rd->l->l_base_ci;
		return 0;
	}
	return rd64(rd, th + rd->l->l_base_ci, base);
}

/* Is @th a thread with a call under way and status OK (running or normal)? */
static bool live_thread(const struct lua_reader *rd, uint64_t th)
{
	const struct lua_layout *l = rd->l;
	uint8_t h[16];
	uint64_t ci, base;

	if (!th || rd->read(rd->ctx, th, h, sizeof(h)) || h[l->l_tt] != (l->tag_thread & 0x3f) ||
	    h[l->l_status] != 0)
		return false;
	return !rd64(rd, th + l->l_ci, &ci) && !base_ci(rd, th, &base) && ci && ci != base;
}

/* The function a CallInfo runs: its value and tag. */
static int ci_func(const struct lua_reader *rd, uint64_t ci, uint64_t *value, uint32_t *tag,
		   uint64_t *func)
{
	int err = rd64(rd, ci + rd->l->ci_func, func);

	return err ? err : read_tv(rd, *func, value, tag);
}

/* Is this value a C function (5.1: a closure with isC)? Its upvalues in *@nup. */
static bool is_c(const struct lua_reader *rd, uint64_t value, uint32_t tag, uint8_t *nup)
{
	const struct lua_layout *l = rd->l;

	*nup = 0;
	if (l->vm == LUA_VM_54) {
		if (tag == l->tag_ccl)
			rd->read(rd->ctx, value + l->cl_nup, nup, 1);
		return tag == l->tag_lcf || tag == l->tag_ccl;
	} else {
		uint8_t h[12];

		if (tag != l->tag_lua || rd->read(rd->ctx, value, h, sizeof(h)) || !h[l->cl_isc])
			return false;
		*nup = h[l->cl_nup];
		return true;
	}
}

/*
 * The coroutine thread @th runs now, if any: its running call is a C
 * function whose first argument (coroutine.resume) or only upvalue
 * (coroutine.wrap's function) is a live thread.
 */
static uint64_t resumed(const struct lua_reader *rd, uint64_t th)
{
	const struct lua_layout *l = rd->l;
	uint64_t ci, base, func, value, v;
	uint32_t tag, t;
	uint8_t nup;

	if (rd64(rd, th + l->l_ci, &ci) || base_ci(rd, th, &base) || ci == base ||
	    ci_func(rd, ci, &value, &tag, &func) || !is_c(rd, value, tag, &nup))
		return 0;
	if (!read_tv(rd, func + l->tv_size, &v, &t) && t == l->tag_thread && live_thread(rd, v))
		return v;
	if (nup == 1 && !read_tv(rd, value + l->ccl_upvalue, &v, &t) && t == l->tag_thread &&
	    live_thread(rd, v))
		return v;
	return 0;
}

/* One CallInfo's frame. */
static int ci_frame(const struct lua_reader *rd, uint64_t th, uint64_t ci, struct lua_frame *f)
{
	const struct lua_layout *l = rd->l;
	uint8_t c[64];
	uint64_t func, value, pc = 0, flags = 0, cur;
	uint32_t tag;
	uint16_t st = 0;
	int32_t tails = 0;
	uint8_t nup;
	int err = rd->read(rd->ctx, ci, c, l->ci_size);

	if (err)
		return err;
	memcpy(&func, c + l->ci_func, 8);
	err = read_tv(rd, func, &value, &tag);
	if (err)
		return err;
	if (l->vm == LUA_VM_54) {
		memcpy(&st, c + l->ci_callstatus, 2);
		flags |= st & LUA54_CIST_FRESH ? HS_LUA_F_FRESH : 0;
		flags |= st & LUA54_CIST_TAIL ? HS_LUA_F_TAIL : 0;
		flags |= st & LUA54_CIST_FIN ? HS_LUA_F_FIN : 0;
		flags |= st & LUA54_CIST_HOOKED ? HS_LUA_F_HOOKED : 0;
	}
	if (is_c(rd, value, tag, &nup)) {
		bool light = l->vm == LUA_VM_54 && tag == l->tag_lcf;

		if (!light && rd64(rd, value + l->ccl_f, &value))
			return -EFAULT;
		*f = (struct lua_frame){ value, HS_LUA_POS(0, light ? HS_LUA_C : HS_LUA_CCL, flags) };
		return 0;
	}
	if (tag != l->tag_lua)
		return -EFAULT;
	if (l->vm == LUA_VM_51) {
		memcpy(&tails, c + l->ci_tailcalls, 4);
		flags |= tails > 0 ? HS_LUA_F_TAIL : 0;
		/* The running call's pc is the thread's (L->savedpc). */
		if (!rd64(rd, th + l->l_ci, &cur) && cur == ci)
			err = rd64(rd, th + l->l_savedpc, &pc);
		else
			memcpy(&pc, c + l->ci_savedpc, 8);
	} else {
		memcpy(&pc, c + l->ci_savedpc, 8);
	}
	if (err || rd64(rd, value + l->lcl_p, &value))
		return -EFAULT;
	*f = (struct lua_frame){ value, HS_LUA_POS(pc, HS_LUA_LUA, flags) };
	return 0;
}

int lua_walk(const struct lua_reader *rd, uint64_t main, struct lua_frame *out,
	     unsigned int max, unsigned int *n)
{
	const struct lua_layout *l = rd->l;
	uint64_t threads[LUA_WALK_THREADS];
	unsigned int nth = 1;

	*n = 0;
	threads[0] = main;
	while (nth < LUA_WALK_THREADS) {
		uint64_t co = resumed(rd, threads[nth - 1]);
		bool seen = false;

		for (unsigned int i = 0; i < nth; i++)
			seen |= threads[i] == co;
		if (!co || seen)
			break;
		threads[nth++] = co;
	}
	for (unsigned int t = nth; t-- > 0;) {
		uint64_t ci, base;
		bool first = true;

		if (rd64(rd, threads[t] + l->l_ci, &ci) || base_ci(rd, threads[t], &base))
			return -EFAULT;
		while (ci && ci != base && *n < max) {
			struct lua_frame *f = &out[*n];

			if (ci_frame(rd, threads[t], ci, f))
				return -EFAULT;
			if (first && t + 1 < nth)
				f->pos |= HS_LUA_F_THREAD;
			first = false;
			(*n)++;
			if (l->vm == LUA_VM_54) {
				if (rd64(rd, ci + l->ci_previous, &ci))
					return -EFAULT;
			} else {
				/* 5.1's CallInfos are an array from base_ci up. */
				if (ci < base)
					return -EFAULT;
				ci -= l->ci_size;
			}
		}
	}
	return (int)*n;
}

/* A thread's tag, its global_State, read whole or not at all. */
static int thread_g(const struct lua_reader *rd, uint64_t th, uint64_t *g)
{
	const struct lua_layout *l = rd->l;
	uint8_t h[64];

	if (!th || (th & 7) || rd->read(rd->ctx, th, h, (size_t)l->l_g + 8) ||
	    h[l->l_tt] != (l->tag_thread & 0x3f))
		return -ENOENT;
	memcpy(g, h + l->l_g, 8);
	return *g && !(*g & 7) ? 0 : -ENOENT;
}

int lua_state__main(const struct lua_reader *rd, uint64_t addr, uint64_t *main, uint64_t *g)
{
	uint64_t m, mg;

	if (thread_g(rd, addr, g) || rd64(rd, *g + rd->l->g_mainthread, &m) ||
	    thread_g(rd, m, &mg) || mg != *g || (rd->l->l_to_g && *g != m + rd->l->l_to_g))
		return -ENOENT;
	*main = m;
	return 0;
}

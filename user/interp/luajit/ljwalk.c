// SPDX-License-Identifier: MIT
/*
 * ljwalk.c - a LuaJIT state's frames from outside (see ljwalk.h), step for
 * step as user/interp/luajit/luajit.bpf.h takes them: the same reads, the same words, so
 * that a difference is the BPF side's. The frame links are lj_frame.h's
 * (GC64: two slots a frame), the skips lj_debug_frame's.
 */
#include <errno.h>
#include <string.h>

#include "heapsnoop/luaframe.h"
#include "interp/luajit/ljproto.h"
#include "interp/luajit/ljwalk.h"

#define GCVMASK ((1ULL << 47) - 1)
#define TAG_THREAD 0x1fff9ULL

static int rd64(const struct lua_reader *rd, uint64_t addr, uint64_t *v)
{
	return rd->read(rd->ctx, addr, v, sizeof(*v));
}

/* The thread @L's running function resumed: its first argument's, or its first upvalue's. */
static uint64_t resumed(const struct lua_reader *rd, uint64_t L)
{
	uint64_t base, slot[2], v;
	uint8_t fn[64];

	if (rd64(rd, L + LJ_L_BASE, &base) || rd->read(rd->ctx, base - 16, slot, sizeof(slot)))
		return 0;
	if (!rd64(rd, base, &v) && v >> 47 == TAG_THREAD)
		return v & GCVMASK;
	if (rd->read(rd->ctx, slot[0] & GCVMASK, fn, sizeof(fn)) || !fn[LJ_FN_FFID] ||
	    !fn[LJ_FN_NUPVALUES] || rd64(rd, (slot[0] & GCVMASK) + LJ_FN_F + 8, &v) ||
	    v >> 47 != TAG_THREAD)
		return 0;
	return v & GCVMASK;
}

/* Thread @L's frames from its top into @out[*@n...]; @pc the innermost's, @first its flags. */
static int walk_thread(const struct lua_reader *rd, uint64_t L, uint64_t pc, uint64_t first,
		       uint64_t base, struct lua_frame *out, unsigned int max, unsigned int *n)
{
	uint64_t stack, f, bot;

	if (rd64(rd, L + LJ_L_STACK, &stack))
		return -EFAULT;
	bot = stack + 8;
	for (f = base - 8; f > bot;) {
		uint64_t slot[2], func, ftsz, link, next, nextpc = 0, code, pos, entry, fpc;
		uint32_t ins;
		uint8_t fn[64];

		if (*n >= max)
			return 0;
		if (rd->read(rd->ctx, f - 8, slot, sizeof(slot)))
			return -EFAULT;
		func = slot[0] & GCVMASK;
		ftsz = slot[1];
		if (!(ftsz & 3)) {
			link = HS_LJ_FRAME_LUA;
			if (rd->read(rd->ctx, ftsz - 4, &ins, sizeof(ins)))
				return -EFAULT;
			nextpc = ftsz;
			next = f - 8 * (2 + ((ins >> 8) & 0xff));
		} else {
			link = ftsz & 7;
			next = f - (ftsz & ~7ULL);
			if (link == HS_LJ_FRAME_CONT && rd64(rd, f - 16, &nextpc))
				nextpc = 0;
		}
		if (next >= f)
			return -EFAULT;
		f = next;
		if (link == HS_LJ_FRAME_VARG)
			continue;
		if (func == L || rd->read(rd->ctx, func, fn, sizeof(fn))) {
			pc = nextpc;
			continue;
		}
		memcpy(&entry, fn + LJ_FN_F, sizeof(entry));
		pos = (link << HS_LJ_LINK_SHIFT) | first;
		first = 0;
		if (fn[LJ_FN_FFID] == 0) {
			memcpy(&fpc, fn + LJ_FN_PC, sizeof(fpc));
			code = fpc - LJ_PROTO_SIZE;
			pos |= HS_LUA_POS(pc, HS_LUA_LUA, 0);
		} else if (fn[LJ_FN_FFID] == 1) {
			code = entry;
			pos |= HS_LUA_POS(0, HS_LUA_C, 0);
		} else {
			code = fn[LJ_FN_FFID];
			pos |= HS_LUA_POS(entry, HS_LUA_FAST, 0);
		}
		out[*n] = (struct lua_frame){ code, pos };
		(*n)++;
		pc = nextpc;
	}
	return 0;
}

int lj_walk(const struct lua_reader *rd, uint64_t main, struct lua_frame *out, unsigned int max,
	    unsigned int *n)
{
	uint64_t g, L, th[LUA_WALK_THREADS], base, cf, pc = 0, jb, first = 0;
	unsigned int nth = 1;
	int32_t vmstate = -1;
	int err;

	*n = 0;
	if (rd64(rd, main + LJ_L_GLREF, &g) || rd64(rd, g + LJ_G_CUR_L, &L) || !(L &= GCVMASK))
		return -EFAULT;
	th[0] = main;
	while (nth < LUA_WALK_THREADS && th[nth - 1] != L) {
		uint64_t next = resumed(rd, th[nth - 1]);

		if (!next)
			break;
		th[nth++] = next;
	}
	if (th[nth - 1] != L) {
		th[0] = L;
		nth = 1;
		if (L != main)
			first = HS_LUA_F_CORO;
	}
	if (rd64(rd, L + LJ_L_BASE, &base))
		return -EFAULT;
	rd->read(rd->ctx, g + LJ_G_VMSTATE, &vmstate, sizeof(vmstate));
	if (vmstate >= 0) {
		if (!rd64(rd, g + LJ_G_JIT_BASE, &jb) && jb)
			base = jb;
		first |= HS_LUA_F_TRACE;
	} else if (!rd64(rd, L + LJ_L_CFRAME, &cf) && (cf &= ~3ULL) &&
		   !rd64(rd, cf + LJ_CF_PC, &pc) && pc == L) {
		pc = 0;
	}
	err = walk_thread(rd, L, pc, first, base, out, max, n);
	/* Each resumer's frames after its coroutine's, the first marked. */
	for (unsigned int t = nth - 1; !err && t > 0; t--) {
		if (rd64(rd, th[t - 1] + LJ_L_BASE, &base))
			return -EFAULT;
		err = walk_thread(rd, th[t - 1], 0, HS_LUA_F_THREAD, base, out, max, n);
	}
	return err ? err : (int)*n;
}

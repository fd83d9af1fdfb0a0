// SPDX-License-Identifier: MIT
/* ljproc.c - a process's LuaJIT state in the loader (see ljproc.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "interp/luajit/ljnames.h"
#include "interp/luajit/ljproc.h"
#include "interp/luajit/ljproto.h"
#include "interp/lua/luaproc.h"

/* A frame's words and its caller's: what its text depends on. */
struct memo {
	uint64_t code, pos, ccode, cpos;
	uint64_t addr;
};

/* Frames remembered at most: then forgotten all at once, and named again. */
#define MEMO_MAX (1u << 16)

struct lj_proc {
	struct lua_vmproc b;
	const struct lj_layout *ly;	/* its build's (ljproto.h) */
	struct lj_names *names;
	struct htab *memo;		/* frame words -> struct memo */
};

struct lj_proc *lj_proc__new(pid_t pid, const struct lua_vm_info *vm,
			     const struct lj_layout *ly, uint64_t bias)
{
	struct lj_proc *lp = calloc(1, sizeof(*lp));

	if (!lp)
		return NULL;
	lua_vmproc__init(&lp->b, pid, vm, bias, NULL);
	lp->ly = ly;
	lp->names = lj_names__new(&lp->b.rd);
	lp->memo = htab__new(256, NULL, NULL);
	if (!lp->names || !lp->memo) {
		lj_proc__free(lp);
		return NULL;
	}
	return lp;
}

static void memo_free(struct htab *h)
{
	struct memo *m;
	size_t pos = 0;

	while (h && (m = htab__next(h, &pos, NULL)))
		free(m);
	htab__free(h);
}

void lj_proc__free(struct lj_proc *lp)
{
	if (!lp)
		return;
	memo_free(lp->memo);
	lj_names__free(lp->names);
	free(lp);
}

const struct lua_vmproc *lj_proc__base(const struct lj_proc *lp)
{
	return &lp->b;
}

const struct lj_layout *lj_proc__layout(const struct lj_proc *lp)
{
	return lp->ly;
}

int lj_proc__set_state(struct lj_proc *lp, uint64_t main, uint32_t tid)
{
	if (!main || (main & 7))
		return -ENOENT;
	lp->b.main = main;
	lp->b.owner = tid;
	return 0;
}

int lj_proc__find_state(struct lj_proc *lp, const uint64_t *words, size_t n, uint32_t tid)
{
	uint64_t m;

	for (size_t i = 0; i < n; i++) {
		/* A heap pointer, 8-aligned: a cheap test before any read. */
		if (words[i] < 4096 || (words[i] & 7) || words[i] >> 47)
			continue;
		if (!lj_state__main(&lp->b.rd, lp->ly, words[i], &m))
			return lj_proc__set_state(lp, m, tid);
	}
	return -ENOENT;
}

static int find_state(void *lp, const uint64_t *words, size_t n, uint32_t tid)
{
	return lj_proc__find_state(lp, words, n, tid);
}

int lj_proc__find_state_stack(struct lj_proc *lp)
{
	return lua_proc__scan_stack(lp->b.pid, find_state, lp);
}

void lj_proc__bpf(const struct lj_proc *lp, struct hs_lua_proc *o)
{
	memset(o, 0, sizeof(*o));
	o->main = lp->b.main;
	o->owner = lp->b.owner;
	o->vm = HS_LUA_VM_JIT;
	o->lj_l_g = LJ_L_GLREF;
	o->lj_l_base = LJ_L_BASE;
	o->lj_l_stack = LJ_L_STACK;
	o->lj_l_cframe = LJ_L_CFRAME;
	o->lj_g_cur_l = LJ_G_CUR_L;
	o->lj_g_vmstate = LJ_G_VMSTATE;
	o->lj_g_jit_base = LJ_G_JIT_BASE;
	o->lj_cf_pc = LJ_CF_PC;
	o->lj_fn_ffid = LJ_FN_FFID;
	o->lj_fn_pc = LJ_FN_PC;
	o->lj_fn_f = LJ_FN_F;
	o->lj_proto_size = LJ_PROTO_SIZE;
}

bool lj_proc__in_vm(void *ctx, uint64_t ra)
{
	const struct lj_proc *lp = ctx;
	uint64_t pc = ra - 1 - lp->b.bias;

	return pc >= lp->b.vm.exec_off_lo && pc < lp->b.vm.exec_off_hi;
}

uint32_t lj_proc__segs(const struct lua_frame *f, uint32_t nf, uint32_t *seg_end, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < nf && n < max; i++) {
		unsigned int link = HS_LJ_LINK(f[i].pos);

		/* Called from C: the VM entered anew below it. A thread's last frame too. */
		if (link == HS_LJ_FRAME_C || link == HS_LJ_FRAME_CP || i + 1 == nf ||
		    (f[i + 1].pos & HS_LUA_F_THREAD))
			seg_end[n++] = i + 1;
	}
	return n;
}

static uint64_t memo_hash(const struct memo *k)
{
	return htab_hash2(htab_hash2(k->code, k->pos), htab_hash2(k->ccode, k->cpos));
}

uint64_t lj_proc__frame_addr(struct lj_proc *lp, const struct lua_frame *f, unsigned int nf,
			     unsigned int i, lua_intern_fn intern, void *ctx, bool *stale)
{
	struct memo k = { .code = f[i].code, .pos = f[i].pos }, *m;
	struct lua_where w;
	uint64_t h;

	/* Its name comes from its caller's calling instruction: the caller's words too. */
	if (i + 1 < nf) {
		k.ccode = f[i + 1].code;
		k.cpos = f[i + 1].pos;
	}
	h = memo_hash(&k);
	m = htab__find(lp->memo, h, h);
	*stale = false;
	if (m && m->code == k.code && m->pos == k.pos && m->ccode == k.ccode && m->cpos == k.cpos)
		return m->addr;
	*stale = lj_names__describe(lp->names, f, nf, i, &w) != 0;
	k.addr = intern(ctx, &w);
	if (*stale || m)
		return k.addr;	/* not kept: read again next time; or a collision */
	if (htab__count(lp->memo) >= MEMO_MAX) {
		memo_free(lp->memo);
		lp->memo = htab__new(256, NULL, NULL);
	}
	m = malloc(sizeof(*m));
	if (m && lp->memo && !htab__add(lp->memo, h, h, m))
		*m = k;
	else
		free(m);
	return k.addr;
}

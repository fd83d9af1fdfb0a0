// SPDX-License-Identifier: MIT
/* luaproc.c - a process's Lua state in the loader (see luaproc.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "htab.h"
#include "interp/lua/luaproc.h"
#include "interp/lua/luawalk.h"
#include "maps/procmaps.h"

/* A frame's words and its caller's: what its text depends on. */
struct memo {
	uint64_t code, pos, ccode, cpos, pc;
	uint64_t addr;
	bool provisional;	/* 5.4: no global name yet (luanames.h) */
	unsigned int gen;	/* ... when package.loaded had been walked this often */
};

/* Frames remembered at most: then forgotten all at once, and named again. */
#define MEMO_MAX (1u << 16)

struct lua_proc {
	struct lua_vmproc b;
	struct htab *memo;		/* frame words -> struct memo */
	struct lua_names *names;	/* once the state is known */
	uint64_t g;
};

int lua_proc__read_pid(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* lua_reader's read: the memory of the base's process. */
static int read_proc(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct lua_vmproc *b = ctx;

	return lua_proc__read_pid(b->pid, addr, buf, len);
}

void lua_vmproc__init(struct lua_vmproc *b, pid_t pid, const struct lua_vm_info *vm,
		      uint64_t bias, const struct lua_layout *l)
{
	*b = (struct lua_vmproc){ .pid = pid, .vm = *vm, .bias = bias };
	b->rd = (struct lua_reader){ .l = l, .read = read_proc, .ctx = b };
}

struct lua_proc *lua_proc__new(pid_t pid, const struct lua_vm_info *vm, uint64_t bias)
{
	struct lua_proc *lp;

	if (!lua_layout__of(vm->vm))
		return NULL;
	lp = calloc(1, sizeof(*lp));
	if (!lp)
		return NULL;
	lua_vmproc__init(&lp->b, pid, vm, bias, lua_layout__of(vm->vm));
	lp->memo = htab__new(256, NULL, NULL);
	if (!lp->memo) {
		free(lp);
		return NULL;
	}
	return lp;
}

static void memo_clear(struct lua_proc *lp)
{
	struct memo *m;
	size_t pos = 0;

	while ((m = htab__next(lp->memo, &pos, NULL)))
		free(m);
	htab__free(lp->memo);
	lp->memo = htab__new(256, NULL, NULL);
}

void lua_proc__free(struct lua_proc *lp)
{
	struct memo *m;
	size_t pos = 0;

	if (!lp)
		return;
	while (lp->memo && (m = htab__next(lp->memo, &pos, NULL)))
		free(m);
	htab__free(lp->memo);
	lua_names__free(lp->names);
	free(lp);
}

const struct lua_vmproc *lua_proc__base(const struct lua_proc *lp)
{
	return &lp->b;
}

static int known(struct lua_proc *lp, uint64_t main, uint64_t g, uint32_t tid)
{
	struct lua_names *names = lua_names__new(&lp->b.rd, g);

	if (!names)
		return -ENOMEM;
	lua_names__free(lp->names);
	lp->names = names;
	lp->b.main = main;
	lp->g = g;
	lp->b.owner = tid;
	return 0;
}

int lua_proc__set_state(struct lua_proc *lp, uint64_t main, uint32_t tid)
{
	/*
	 * lua_newstate's own return: its global_State is beside it (LG), and
	 * nothing needs reading now (the process may have closed the state
	 * by the time its records are read).
	 */
	if (!main || (main & 7))
		return -ENOENT;
	return known(lp, main, main + lp->b.rd.l->l_to_g, tid);
}

int lua_proc__find_state(struct lua_proc *lp, const uint64_t *words, size_t n, uint32_t tid)
{
	uint64_t m, g;

	for (size_t i = 0; i < n; i++) {
		/* A heap pointer, 8-aligned: a cheap test before any read. */
		if (words[i] < 4096 || (words[i] & 7) || words[i] >> 47)
			continue;
		if (!lua_state__main(&lp->b.rd, words[i], &m, &g))
			return known(lp, m, g, tid);
	}
	return -ENOENT;
}

int lua_proc__scan_stack(pid_t pid, int (*find)(void *lp, const uint64_t *words, size_t n,
						  uint32_t tid), void *lp)
{
	uint64_t page[512], s = 0, e = 0;
	int err = proc_maps__stack(pid, &s, &e);

	if (err == -ESRCH)
		return err;
	err = -ENOENT;
	/* From the top: the frames of main, of lua.c's (luajit.c's) pmain, hold the state. */
	for (uint64_t a = e; a > s && err; a -= sizeof(page)) {
		if (lua_proc__read_pid(pid, a - sizeof(page), page, sizeof(page)))
			continue;
		err = find(lp, page, 512, (uint32_t)pid);
	}
	return err;
}

static int find_state(void *lp, const uint64_t *words, size_t n, uint32_t tid)
{
	return lua_proc__find_state(lp, words, n, tid);
}

int lua_proc__find_state_stack(struct lua_proc *lp)
{
	return lua_proc__scan_stack(lp->b.pid, find_state, lp);
}

void lua_proc__bpf(const struct lua_proc *lp, struct hs_lua_proc *o)
{
	const struct lua_layout *l = lp->b.rd.l;

	memset(o, 0, sizeof(*o));
	o->main = lp->b.main;
	o->owner = lp->b.owner;
	o->vm = l->vm == LUA_VM_54 ? HS_LUA_VM_54 : HS_LUA_VM_51;
	o->l_ci = l->l_ci;
	o->l_status = l->l_status;
	o->l_savedpc = l->l_savedpc;
	o->l_base_ci = l->l_base_ci;
	o->ci_size = l->ci_size;
	o->ci_func = l->ci_func;
	o->ci_previous = l->ci_previous;
	o->ci_savedpc = l->ci_savedpc;
	o->ci_callstatus = l->ci_callstatus;
	o->ci_tailcalls = l->ci_tailcalls;
	o->cl_isc = l->cl_isc;
	o->cl_nup = l->cl_nup;
	o->lcl_p = l->lcl_p;
	o->ccl_f = l->ccl_f;
	o->ccl_upvalue = l->ccl_upvalue;
	o->tv_tt = l->tv_tt;
	o->tv_tt_size = l->tv_tt_size;
	o->tag_lua = (uint8_t)l->tag_lua;
	o->tag_lcf = (uint8_t)l->tag_lcf;
	o->tag_ccl = (uint8_t)l->tag_ccl;
	o->tag_thread = (uint8_t)l->tag_thread;
	o->thread_tt = (uint8_t)(l->tag_thread & 0x3f);
}

bool lua_proc__in_exec(const struct lua_proc *lp, uint64_t ra)
{
	uint64_t pc = ra - 1 - lp->b.bias;

	return pc >= lp->b.vm.exec_off_lo && pc < lp->b.vm.exec_off_hi;
}

bool lua_proc__in_resume(const struct lua_proc *lp, uint64_t ra)
{
	uint64_t pc = ra - 1 - lp->b.bias;

	return pc >= lp->b.vm.resume_off_lo && pc < lp->b.vm.resume_off_hi;
}

void lua_proc__exec_range(const struct lua_proc *lp, uint64_t *lo, uint64_t *hi)
{
	*lo = lp->b.vm.exec_off_lo + lp->b.bias;
	*hi = lp->b.vm.exec_off_hi + lp->b.bias;
}

uint64_t lua_proc__exact_pc(struct lua_proc *lp, const struct lua_frame *f,
			    const uint64_t *regs, uint32_t nregs, uint32_t known)
{
	struct lua_proto *p;
	uint64_t end;

	if (!lp->names || HS_LUA_POS_KIND(f->pos) != HS_LUA_LUA)
		return 0;
	p = lua_names__proto(lp->names, f->code);
	if (!p)
		return 0;
	end = p->code_addr + 4ull * (uint64_t)p->sizecode;
	for (uint32_t r = 0; r < nregs && r < 32; r++) {
		/* A pc is past the instruction it runs: (code, end]. */
		if ((known >> r & 1) && regs[r] > p->code_addr && regs[r] <= end &&
		    !((regs[r] - p->code_addr) & 3))
			return regs[r];
	}
	return 0;
}

bool lua_proc__calls(void *ctx, const struct lua_frame *c)
{
	struct lua_proc *lp = ctx;
	struct lua_proto *p = lp->names ? lua_names__proto(lp->names, c->code) : NULL;
	int pc = p ? lua_proto__pc(p, HS_LUA_POS_PC(c->pos)) : -1;
	uint32_t op = pc >= 0 ? p->code[pc] & 0x3f : 0;

	/* 5.1's OP_CALL (28) and OP_TAILCALL (29); unknown: as a call. */
	return pc < 0 || op == 28 || op == 29;
}

static uint64_t memo_hash(const struct memo *k)
{
	return htab_hash2(htab_hash2(htab_hash2(k->code, k->pos), htab_hash2(k->ccode, k->cpos)),
			  k->pc);
}

/*
 * Kept frame @m, named without a global name, named again as frame @i of
 * @f (its words, @nf frames): its new address kept and, if it changed,
 * the old one renamed by @rename (if not NULL). A frame that cannot be
 * described or given an address keeps the one it had. True if renamed.
 */
static bool renew(struct lua_proc *lp, struct memo *m, const struct lua_frame *f, unsigned int nf,
		  unsigned int i, lua_intern_fn intern, lua_rename_fn rename, void *ctx)
{
	struct lua_where w;
	uint64_t addr;

	if (lua_names__describe(lp->names, f, nf, i, m->pc, &w))
		return false;
	addr = intern(ctx, &w);
	if (!addr)
		return false;
	m->provisional = w.provisional;
	m->gen = lua_names__globals_gen(lp->names);
	if (addr == m->addr)
		return false;
	if (rename && m->addr)
		rename(ctx, m->addr, addr);
	m->addr = addr;
	return true;
}

uint64_t lua_proc__frame_addr(struct lua_proc *lp, const struct lua_frame *f, unsigned int nf,
			      unsigned int i, uint64_t pc, lua_intern_fn intern,
			      lua_rename_fn rename, void *ctx, bool *stale)
{
	bool outermost = i + 1 >= nf || (f[i + 1].pos & HS_LUA_F_THREAD);
	struct memo k = { .code = f[i].code, .pos = f[i].pos, .pc = pc }, *m;
	struct lua_where w;
	uint64_t h;

	*stale = false;
	/* Its name comes from its caller's calling instruction: the caller's words too. */
	if (!outermost) {
		k.ccode = f[i + 1].code;
		k.cpos = f[i + 1].pos;
	}
	h = memo_hash(&k);
	m = htab__find(lp->memo, h, h);
	if (m && m->code == k.code && m->pos == k.pos && m->ccode == k.ccode && m->cpos == k.cpos &&
	    m->pc == k.pc) {
		/*
		 * Named before package.loaded knew it (a module still loading, a
		 * global not set yet): named again once it may have been walked
		 * since, at most once a second.
		 */
		if (m->provisional && lp->names && lua_names__globals_due(lp->names, m->gen))
			renew(lp, m, f, nf, i, intern, rename, ctx);
		return m->addr;
	}
	if (!lp->names || lua_names__describe(lp->names, f, nf, i, pc, &w)) {
		*stale = true;
		if (!lp->names)
			return intern(ctx, &(struct lua_where){ .function = "?", .file = "?",
								.line = -1 });
	}
	k.addr = intern(ctx, &w);
	k.provisional = w.provisional;
	k.gen = lua_names__globals_gen(lp->names);
	if (*stale || htab__find(lp->memo, h, h))
		return k.addr;	/* not kept: read again next time; or a collision */
	if (htab__count(lp->memo) >= MEMO_MAX)
		memo_clear(lp);
	m = malloc(sizeof(*m));
	if (m && lp->memo && !htab__add(lp->memo, h, h, m))
		*m = k;
	else
		free(m);
	return k.addr;
}

unsigned int lua_proc__settle(struct lua_proc *lp, lua_intern_fn intern, lua_rename_fn rename,
			      void *ctx)
{
	unsigned int renamed = 0;
	bool waiting = false;
	struct memo *m;
	size_t pos = 0;

	if (!lp->names || !lp->memo)
		return 0;
	while (!waiting && (m = htab__next(lp->memo, &pos, NULL)))
		waiting = m->provisional;
	if (!waiting || !lua_names__walk_now(lp->names))
		return 0;
	pos = 0;
	while ((m = htab__next(lp->memo, &pos, NULL))) {
		/* The frame and its caller, as its name depends on them (the memo's key). */
		struct lua_frame f[2] = { { .code = m->code, .pos = m->pos },
					  { .code = m->ccode, .pos = m->cpos } };

		if (m->provisional)
			renamed += renew(lp, m, f, m->ccode || m->cpos ? 2 : 1, 0, intern, rename, ctx);
	}
	return renamed;
}

struct lua_names *lua_proc__names(struct lua_proc *lp)
{
	return lp->names;
}

void lua_proc__forget(struct lua_proc *lp, uint64_t addr)
{
	if (lp->names)
		lua_names__forget(lp->names, addr);
}

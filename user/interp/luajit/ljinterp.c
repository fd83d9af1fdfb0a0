// SPDX-License-Identifier: MIT
/*
 * ljinterp.c - LuaJIT's part of the loader's interpreter frames (see
 * interp_int.h): a LuaJIT found in a traced process (luafind.h) has its
 * own allocator, lj_alloc_f (ljfind.h), probed as an allocator with
 * lua_Alloc's realloc rules: the same entry and return programs as
 * malloc's (bpf/alloc.h, HS_FN_LUA_ALLOCF), the same probe site rules
 * (probesite.h), the return probe first, so that an entry seen always has
 * its return hooked (attach.c's order). Without it no LuaJIT object is a
 * live block: they come from mmap'ed arenas, not malloc. Its frames:
 * registered for the BPF walk (user/interp/luajit/luajit.bpf.h), its state taken from
 * lua_newstate's return (launch mode: the PUC walk's uretprobe) or found
 * in the process's stack or an allocation's registers and stack (-p);
 * each allocation's frames named as LuaJIT's traceback names them and
 * spliced where each native frame of its VM was (ljproc.h).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "heapsnoop.skel.h"
#include "interp/interp_int.h"
#include "interp/luajit/ljfind.h"
#include "interp/luajit/ljproc.h"
#include "interp/luajit/ljproto.h"
#include "interp/splice.h"
#include "msg.h"
#include "stacks.h"

/* The return program this kernel loads (kfeatures.c chose it), as attach.c's. */
static struct bpf_program *exit_prog(struct heapsnoop_bpf *skel)
{
	if (bpf_program__autoload(skel->progs.alloc_exit))
		return skel->progs.alloc_exit;
	return skel->progs.alloc_exit_compat;
}

/* lj_alloc_f in @path, probed for @p: its return, then its entry. */
static int probe_allocf(struct interp *ip, struct iproc *p, const char *path,
			struct lj_allocf *af)
{
	int err = lj_find__allocf(path, af);

	if (err)
		return err;
	if (ip->o.verbose)
		elog("%-15s %#llx+%-3u %-28s %s%s", "lj_alloc_f", (unsigned long long)af->addr,
		     af->ps.offset, af->ps.insn, af->ps.why,
		     af->ps.emulated ? "" : " (single-stepped: slow)");
	err = interp__probe_at(ip, p, exit_prog(ip->o.skel), true, path, af->site);
	if (!err)
		err = interp__probe_at(ip, p, ip->o.skel->progs.lua_allocf_enter, false, path,
				       af->site);
	return err;
}

/* @p's walk in the BPF side's interp_procs (its state known or not yet). */
static int lj_register(struct interp *ip, struct iproc *p)
{
	struct hs_interp_proc cfg;
	uint32_t pid = (uint32_t)p->pid;

	memset(&cfg, 0, sizeof(cfg));
	cfg.kind = HS_INTERP_LUA;
	cfg.max_frames = ip->o.max_frames;
	lj_proc__bpf(p->lj, &cfg.lua);
	if (bpf_map__update_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg,
				 sizeof(cfg), BPF_ANY))
		return -errno;
	return 0;
}

/* Read @p's LuaJIT frames from now on (its file @path, found as @vm says). */
static int lj_turn_on(struct interp *ip, struct iproc *p, const char *path,
		      const struct lua_vm_info *vm, uint64_t bias, enum interp_when when)
{
	int err;

	p->lj = lj_proc__new(p->pid, vm, bias);
	p->pending = htab__new(8, NULL, NULL);
	if (!p->lj || !p->pending)
		return -ENOMEM;
	/* Launch mode: the state is made later; lua_newstate's return gives it. */
	err = interp__probe_at(ip, p, ip->o.skel->progs.lua_newstate_ret, true, path,
			       vm->newstate);
	if (!err && when == INTERP_RUNNING)
		lj_proc__find_state_stack(p->lj);
	if (!err)
		err = lj_register(ip, p);
	if (err)
		return err;
	p->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	p->state = IP_ON;
	p->kind = HS_INTERP_LUA;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
	ip->c.registered++;
	if (lj_proc__has_state(p->lj))
		ip->c.lua_states++;
	return 0;
}

bool interp__look_luajit(struct interp *ip, struct iproc *p, const char *path, const char *shown,
			 const struct lua_vm_info *vm, uint64_t bias, enum interp_when when)
{
	struct lj_allocf af;
	int err = probe_allocf(ip, p, path, &af);

	if (err) {
		ip->c.refused++;
		elog("pid %d runs LuaJIT (%s), whose allocator (lj_alloc_f) could not be probed "
		     "(%s): its objects are not live blocks here (LuaJIT allocates them itself, "
		     "not with malloc); its Lua frames are not read", p->pid, shown,
		     err == -ENOENT ? "not found in lua_newstate's code" :
		     err == -ENOTSUP ? "not looked for on this architecture" : strerror(-err));
		return true;
	}
	if (ip->o.lua && af.gg_size != LJ_GG_SIZE) {
		ip->c.refused++;
		elog("pid %d runs LuaJIT (%s): its objects are live blocks (its allocator lj_alloc_f "
		     "probed); its frames are not read: its state is %u bytes, not the %u of the "
		     "LuaJIT 2.1 (GC64) whose layout heapsnoop knows", p->pid, shown, af.gg_size,
		     LJ_GG_SIZE);
		return true;
	}
	if (!ip->o.lua) {
		elog("pid %d runs LuaJIT (%s): its objects are live blocks (its allocator lj_alloc_f "
		     "probed)%s; its frames are not read (--interp without lua)", p->pid, shown,
		     when == INTERP_RUNNING ? ", those it allocated before tracing began not seen" :
					      "");
		return true;
	}
	err = lj_turn_on(ip, p, path, vm, bias, when);
	if (err) {
		ip->c.refused++;
		elog("pid %d runs LuaJIT (%s): its objects are live blocks, but its frames cannot "
		     "be read: %s", p->pid, shown, strerror(-err));
		interp__reset(ip, p);
		p->looked = true;
		return true;
	}
	p->lua_refused = false;
	elog("pid %d runs LuaJIT 2.1 (%s): its objects are live blocks (its allocator "
	     "lj_alloc_f probed)%s; its frames are read (its VM by the largest FDE)%s", p->pid,
	     shown, when == INTERP_RUNNING ? ", those it allocated before tracing began not seen" :
					     "",
	     when != INTERP_RUNNING || lj_proc__has_state(p->lj) ? "" :
	     ", once its state is found in an allocation's registers or stack");
	return true;
}

/* -f: a child of a LuaJIT process: the same state, its memory a copy, run by its one thread. */
void interp__forked_lj(struct interp *ip, struct iproc *pp, struct iproc *c)
{
	c->lj = lj_proc__new(c->pid, lj_proc__vm(pp->lj), lj_proc__bias(pp->lj));
	c->pending = htab__new(8, NULL, NULL);
	c->looked = true;
	if (!c->lj || !c->pending) {
		interp__reset(ip, c);
		return;
	}
	if (lj_proc__has_state(pp->lj))
		lj_proc__set_state(c->lj, lj_proc__main(pp->lj), (uint32_t)c->pid);
	c->state = IP_ON;
	c->kind = HS_INTERP_LUA;
	c->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
}

/*
 * @p's state, if known; else found now: lua_newstate's return, which the
 * BPF side kept (launch mode), or allocation @ev's registers and stack
 * (-p), then registered for the next allocations.
 */
static bool lj_state(struct interp *ip, struct iproc *p, const struct hs_event *ev)
{
	const struct hs_user_stack *us = (const void *)((const char *)ev + HS_EVENT_HDR_SIZE);
	struct hs_interp_proc cfg;
	uint32_t pid = (uint32_t)p->pid;

	if (lj_proc__has_state(p->lj))
		return true;
	if (!bpf_map__lookup_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg,
				  sizeof(cfg), 0) &&
	    cfg.kind == HS_INTERP_LUA && cfg.lua.main &&
	    !lj_proc__set_state(p->lj, cfg.lua.main, cfg.lua.owner)) {
		ip->c.lua_states++;
		return true;
	}
	if (!(ev->flags & HS_EVF_USER_STACK) ||
	    (lj_proc__find_state(p->lj, (const uint64_t *)us->regs, HS_UREG__MAX, ev->tid) &&
	     lj_proc__find_state(p->lj, (const uint64_t *)us->data, us->size / 8, ev->tid)))
		return false;
	ip->c.lua_states++;
	lj_register(ip, p);
	return true;
}

struct lj_intern_ctx {
	struct interp *ip;
	pid_t pid;
};

/* lj_intern_fn: a frame's text, its address in the records. */
static uint64_t lj_intern(void *ctx, const struct lua_where *w)
{
	const struct lj_intern_ctx *c = ctx;
	struct interp_frame f = { .kind = HS_INTERP_LUA, .function = w->function, .file = w->file,
				  .line = w->line > 0 ? (uint32_t)w->line : 0 };

	return c->ip->o.frame_addr(c->ip->o.ctx, c->pid, &f);
}

/*
 * The runs of frames @f (ljproc.h) into @seg_end; returns how many. A
 * whole native stack with more VM frames than runs has VM entries that
 * run no Lua frame (lua_load's parser, lj_vm_cpcall without a function:
 * a C function's call inside the innermost run): the innermost VM
 * frames take empty runs, so that each run goes to its own VM frame
 * counted from the outside.
 */
static uint32_t lj_segs(struct lj_proc *lj, const struct lua_frame *f, uint32_t nf,
			const uint64_t *native, uint32_t n, bool cut, uint32_t *seg_end)
{
	uint32_t nseg = lj_proc__segs(f, nf, seg_end, HS_INTERP_MAX_FRAMES + 1), nvm = 0, pad;

	for (uint32_t i = 0; i < n; i++)
		nvm += lj_proc__in_vm(lj, native[i]);
	if (cut || nvm <= nseg || nvm > HS_INTERP_MAX_FRAMES + 1)
		return nseg;
	pad = nvm - nseg;
	memmove(seg_end + pad, seg_end, nseg * sizeof(*seg_end));
	for (uint32_t k = 0; k < pad; k++)
		seg_end[k] = 0;
	return nvm;
}

uint32_t interp__lj_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			   struct pending *pd, const uint64_t *native, uint32_t n, bool native_cut,
			   uint64_t *out, uint32_t max, uint32_t *flags)
{
	const struct lua_frame *f;
	struct lj_intern_ctx c = { ip, (pid_t)ev->pid };
	struct splice_in in;
	uint32_t sflags;
	bool stale;

	if (!pd) {
		/* Its state not known yet (-p), or not its thread: no frames, unmarked. */
		if (!lj_state(ip, p, ev))
			ip->c.no_frames++;
		return interp__copy_native(native, n, out, max);
	}
	if (!lj_state(ip, p, ev)) {
		ip->c.lost++;
		*flags = STACK_FAULT;
		return interp__copy_native(native, n, out, max);
	}
	f = (const struct lua_frame *)pd->f;
	for (uint32_t i = 0; i < pd->nr; i++) {
		ip->iframes[i] = lj_proc__frame_addr(p->lj, f, pd->nr, i, lj_intern, &c, &stale);
		ip->c.lua_stale += stale;
	}
	in = (struct splice_in){ .native = native, .nnative = n, .native_cut = native_cut,
				 .iframes = ip->iframes, .seg_end = ip->seg_end,
				 /* A coroutine's resumers were not read: their VM frames stay. */
				 .interp_cut = (pd->flags & HS_EVF_TRUNCATED) ||
					       (pd->nr && (f[0].pos & HS_LUA_F_CORO)),
				 .is_eval = lj_proc__in_vm, .ctx = p->lj };
	in.nseg = lj_segs(p->lj, f, pd->nr, native, n, native_cut || in.interp_cut, ip->seg_end);
	ip->c.frames += pd->nr;
	ip->c.named += pd->nr;
	n = splice__frames(&in, out, max, &sflags);
	if (sflags & SPLICE_ORDER) {
		ip->c.order++;
		*flags |= STACK_ORDER;
	}
	if ((sflags & SPLICE_DEPTH) || (pd->flags & HS_EVF_TRUNCATED)) {
		ip->c.truncated++;
		*flags |= STACK_TRUNCATED;
	}
	if (pd->flags & HS_EVF_STACK_FAULT)
		*flags |= STACK_FAULT;
	pd->nr = 0;	/* taken */
	return n;
}

// SPDX-License-Identifier: MIT
/*
 * luainterp.c - PUC Lua's row of the table of runtimes (ops.h), and the
 * steps both Lua rooms take (luainterp.h): a Lua VM found in a traced process
 * (luafind.h) and registered for the BPF walk (user/interp/lua/lua.bpf.h); its state
 * taken from lua_newstate's return (launch mode: a uretprobe) or found
 * in an allocation's registers and stack (-p: luaproc.h); each
 * allocation's Lua frames named as Lua's own traceback names them, the
 * innermost at the exact pc the interpreter loop keeps in a register,
 * and spliced where each luaV_execute run was (luasegs.h, splice.h).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "heapsnoop.skel.h"
#include "interp/interp_int.h"
#include "interp/lua/luafind.h"
#include "interp/lua/luainterp.h"
#include "interp/lua/luaproc.h"
#include "interp/lua/luasegs.h"
#include "interp/lua/pllua.h"
#include "interp/plread_int.h"
#include "maps/procmaps.h"
#include "msg.h"
#include "stacks.h"
#include "text.h"


/* struct lua_room's steps on a struct lua_proc. */
/* @p's PUC Lua (its room slot's, when this row made it), or NULL. */
static inline struct lua_proc *lua_of(const struct iproc *p)
{
	return interp__room(p, &interp_lua_ops);
}

static bool lua_has_state(const void *vm)
{
	return lua_proc__base(vm)->main != 0;
}

static int lua_set_state(void *vm, uint64_t main, uint32_t tid)
{
	return lua_proc__set_state(vm, main, tid);
}

static int lua_find_state(void *vm, const uint64_t *words, size_t n, uint32_t tid)
{
	return lua_proc__find_state(vm, words, n, tid);
}

static void lua_bpf(const void *vm, struct hs_lua_proc *out)
{
	lua_proc__bpf(vm, out);
}

static const struct lua_room puc_room = {
	.has_state = lua_has_state, .set_state = lua_set_state, .find_state = lua_find_state,
	.bpf = lua_bpf,
};

void lua_room__config(const struct interp *ip, const struct lua_room *r, const void *vm,
		      struct hs_interp_proc *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = HS_INTERP_LUA;
	cfg->max_frames = ip->o.max_frames;
	r->bpf(vm, &cfg->lua);
}

/* Register @p's Lua VM (its file @path) with the BPF side, its state known or not yet. */
static int turn_on_lua(struct interp *ip, struct iproc *p, const char *path)
{
	struct hs_interp_proc cfg;
	int err;

	p->pending = htab__new(8, NULL, NULL);
	if (!p->pending)
		return -ENOMEM;
	/* Launch mode: the state is made later, by lua_newstate (luaL_newstate's too). */
	err = interp__probe_at(ip, p, ip->o.skel->progs.lua_newstate_ret, true, path,
		       lua_proc__base(lua_of(p))->vm.newstate);
	if (err)
		return err;
	lua_room__config(ip, &puc_room, lua_of(p), &cfg);
	return interp__turn_on(ip, p, &interp_lua_ops, &cfg);
}

/* Lua's look (ops.h). */
static bool lua_look(struct interp *ip, struct iproc *p, const struct mapset *pm,
		      enum interp_when when)
{
	char link[64], path[PATH_MAX], root[64];
	struct lua_vm_info vm;
	const struct mapping *m = NULL;
	struct stat exe;
	bool have_exe;
	int err = -ENOENT;

	/* A VM refused at the exec stop is the same at the C library's: said once (p->refused). */
	snprintf(link, sizeof(link), "/proc/%d/exe", p->pid);
	have_exe = !stat(link, &exe);
	/* Its debug files are looked for in its own root. */
	snprintf(root, sizeof(root), "/proc/%d/root", p->pid);
	for (size_t i = 0; i < pm->n && err == -ENOENT; i++) {
		m = &pm->v[i];
		if (!(have_exe && m->dev == exe.st_dev && m->ino == exe.st_ino) &&
		    strncmp(path_base(m->path), "liblua", 6))
			continue;
		if (proc_maps__reach(p->pid, m, path, sizeof(path)))
			continue;
		err = lua_find__file(path, root, &vm);
	}
	if (err == -ENOENT)
		return false;
	/* The Lua walker off (--interp python): only LuaJIT's allocator is probed. */
	if (!ip->o.lua && (err || vm.vm != LUA_VM_JIT))
		return false;
	p->refused = true;	/* until it is read */
	if (err == -ENOTSUP) {
		elog("pid %d runs %s, a Lua heapsnoop does not read (5.2 or 5.3): its Lua frames "
		     "are not read", p->pid, m->path);
		return true;
	}
	if (err) {
		ip->c.refused++;
		elog("pid %d runs Lua (%s), whose interpreter loop was not found (%s): its Lua "
		     "frames are not read", p->pid, m->path, strerror(-err));
		return true;
	}
	/* Another room's (LuaJIT's) VM: its row reads it. */
	if (vm.vm == LUA_VM_JIT)
		for (const struct interp_ops *const *r = interp_rooms; *r; r++)
			if ((*r)->lua_vm)
				return (*r)->lua_vm(ip, p, path, m->path, &vm,
						    m->start - m->offset, when);
	p->refused = false;
	interp__set_room(p, &interp_lua_ops, lua_proc__new(p->pid, &vm, m->start - m->offset));
	if (!lua_of(p)) {
		ip->c.refused++;
		return true;
	}
	if (when == INTERP_RUNNING && !lua_proc__find_state_stack(lua_of(p)))
		ip->c.lua_states++;
	err = turn_on_lua(ip, p, path);
	if (err) {
		ip->c.refused++;
		elog("pid %d runs %s (%s): its frames cannot be read: %s", p->pid,
		     lua_layout__of(vm.vm)->name, m->path, strerror(-err));
		interp__reset(ip, p);
		p->looked = true;
		p->refused = true;
		return true;
	}
	elog("pid %d runs %s (%s): its frames are read (its interpreter loop by %s)%s", p->pid,
	     lua_layout__of(vm.vm)->name, m->path,
	     vm.exec_by_symbol ? "its debug file's symbol" : "the largest FDE",
	     when != INTERP_RUNNING ? "" : lua_proc__base(lua_of(p))->main ? "" :
	     ", once its state is found in an allocation's registers or stack");
	return true;
}

bool lua_room__state(struct interp *ip, struct iproc *p, const struct lua_room *r, void *vm,
		     const struct hs_event *ev)
{
	const struct hs_user_stack *us = (const void *)((const char *)ev + HS_EVENT_HDR_SIZE);
	struct hs_interp_proc cfg;
	uint32_t pid = (uint32_t)p->pid;

	if (r->has_state(vm))
		return true;
	if (!bpf_map__lookup_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg,
				  sizeof(cfg), 0) &&
	    cfg.kind == HS_INTERP_LUA && cfg.lua.main &&
	    !r->set_state(vm, cfg.lua.main, cfg.lua.owner)) {
		ip->c.lua_states++;
		return true;
	}
	if (!(ev->flags & HS_EVF_USER_STACK) ||
	    (r->find_state(vm, (const uint64_t *)us->regs, HS_UREG__MAX, ev->tid) &&
	     r->find_state(vm, (const uint64_t *)us->data, us->size / 8, ev->tid)))
		return false;
	ip->c.lua_states++;
	/* The BPF side walks it from the next allocation. */
	lua_room__config(ip, r, vm, &cfg);
	bpf_map__update_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg, sizeof(cfg),
			     BPF_ANY);
	return true;
}

/* -f: a child of a Lua process: the same state, its memory a copy, run by its one thread. */
static void lua_fork(struct interp *ip, struct iproc *pp, struct iproc *c)
{
	const struct lua_vmproc *pb = lua_proc__base(lua_of(pp));

	interp__set_room(c, &interp_lua_ops, lua_proc__new(c->pid, &pb->vm, pb->bias));
	c->pending = htab__new(8, NULL, NULL);
	c->looked = true;
	if (!lua_of(c) || !c->pending) {
		interp__reset(ip, c);
		return;
	}
	if (pb->main)
		lua_proc__set_state(lua_of(c), pb->main, (uint32_t)c->pid);
	interp__forked_on(ip, c, &interp_lua_ops);
}

/* --- Lua's splice ----------------------------------------------------------- */

uint64_t lua_room__intern(void *ctx, const struct lua_where *w)
{
	const struct lua_intern_ctx *c = ctx;
	struct interp_frame f = { .kind = HS_INTERP_LUA, .function = w->function, .file = w->file,
				  .line = w->line > 0 ? (uint32_t)w->line : 0 };

	return c->ip->o.frame_addr(c->ip->o.ctx, c->pid, &f);
}

void lua_room__rename(void *ctx, uint64_t old, uint64_t new)
{
	const struct lua_intern_ctx *c = ctx;

	if (c->ip->o.frame_rename)
		c->ip->o.frame_rename(c->ip->o.ctx, c->pid, old, new);
}

/* Lua's settle (ops.h). */
static void lua_settle(struct interp *ip, struct iproc *p)
{
	struct lua_intern_ctx c = { ip, p->pid };

	if (lua_of(p))
		ip->c.lua_renamed += lua_proc__settle(lua_of(p), lua_room__intern,
						      lua_room__rename, &c);
}

static bool lua_is_eval(void *ctx, uint64_t ra)
{
	return lua_proc__in_exec(ctx, ra);
}

/*
 * @pd's Lua frames named (the innermost at its exact pc, from @grab: the
 * interpreter loop's registers), cut into the loop's runs (luasegs.h),
 * each where its luaV_execute frame was among @native.
 */
static uint32_t lua_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			   const struct pending *pd, const uint64_t *native, uint32_t n,
			   bool native_cut, const struct unwind_grab *grab, uint64_t *out,
			   uint32_t max, uint32_t *flags)
{
	const struct lua_frame *f = (const struct lua_frame *)pd->f;
	struct lua_intern_ctx c = { ip, (pid_t)ev->pid };
	uint32_t evals[HS_LUA_THREADS + 1] = { 0 }, nth = 1;
	struct splice_in in;
	uint64_t pc = 0;
	bool stale;

	/* The loop's frames of each thread, innermost first: lua_resume's frames part them. */
	for (uint32_t i = 0; i < n; i++) {
		if (lua_proc__in_exec(lua_of(p), native[i]))
			evals[nth - 1]++;
		else if (lua_proc__in_resume(lua_of(p), native[i]) && nth <= HS_LUA_THREADS)
			nth++;
	}
	in = (struct splice_in){ .native = native, .nnative = n, .native_cut = native_cut,
				 .iframes = ip->iframes, .seg_end = ip->seg_end,
				 .interp_cut = pd->flags & HS_EVF_TRUNCATED,
				 .is_eval = lua_is_eval, .ctx = lua_of(p) };
	in.nseg = lua_segs(&(struct lua_segs_in){
				   .f = f, .nf = pd->nr,
				   .v51 = lua_proc__base(lua_of(p))->vm.vm == LUA_VM_51,
				   .calls = lua_proc__calls, .ctx = lua_of(p),
				   .evals = native_cut ? NULL : evals, .nthreads = nth },
			   ip->seg_end, HS_INTERP_MAX_FRAMES + 1);
	if (grab && grab->found)
		pc = lua_proc__exact_pc(lua_of(p), &f[0], grab->regs, CFI_NREGS, grab->known);
	if (lua_proc__names(lua_of(p)))
		lua_names__tick(lua_proc__names(lua_of(p)));
	for (uint32_t i = 0; i < pd->nr; i++) {
		ip->iframes[i] = lua_proc__frame_addr(lua_of(p), f, pd->nr, i, i ? 0 : pc, lua_room__intern,
						      lua_room__rename,
						      &c, &stale);
		ip->c.lua_stale += stale;
	}
	ip->c.frames += pd->nr;
	ip->c.named += pd->nr;
	return interp__splice_out(ip, &in, pd, pd->flags & HS_EVF_TRUNCATED, out, max, flags);
}

/* Lua's splice (ops.h). */
static uint32_t lua_row_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			       uint64_t seq, struct pending *pd, const uint64_t *native, uint32_t n,
			       bool native_cut, const struct unwind_grab *grab, uint64_t *out,
			       uint32_t max, uint32_t *flags)
{
	(void)seq;
	if (!pd) {
		/* Its state not known yet (-p), or not its thread: no frames, unmarked. */
		if (!lua_room__state(ip, p, &puc_room, lua_of(p), ev))
			ip->c.no_frames++;
		return interp__copy_native(native, n, out, max);
	}
	if (!lua_room__state(ip, p, &puc_room, lua_of(p), ev)) {
		ip->c.lost++;
		*flags = STACK_FAULT;
		return interp__copy_native(native, n, out, max);
	}
	n = lua_splice(ip, p, ev, pd, native, n, native_cut, grab, out, max, flags);
	pd->nr = 0;	/* taken */
	return n;
}

/* The interpreter loop's frame: its registers keep the running function's exact position. */
static bool lua_grab(struct iproc *p, uint64_t *lo, uint64_t *hi)
{
	if (!lua_of(p))
		return false;
	lua_proc__exec_range(lua_of(p), lo, hi);
	return true;
}

static void lua_forget(struct interp *ip, struct iproc *p)
{
	(void)ip;
	lua_proc__free(lua_of(p));
}

/* --preload's reading (ops.h's pl_*): pllua.c's, on the images of plpython.c. */
static bool lua_pl_is(uint32_t py_version, uint32_t lua_vm)
{
	return !py_version && lua_vm;
}

static uint64_t lua_pl_anchor(const struct lt_header *h)
{
	return h->lua_newstate;
}

static int lua_pl_read(struct plread_image *pi, const char *path, uint64_t start, uint64_t off,
		       uint64_t anchor, char *why, size_t cap)
{
	(void)anchor;
	return pllua__read_binary(pi, path, start, off, why, cap);
}

static void lua_pl_said(const struct plread_image *pi)
{
	const struct lua_layout *l = lua_layout__of((enum lua_vm)pi->h->lua_vm);

	elog("pid %d: %s, its frames read and named by its collector", (int)pi->pid,
	     l ? l->name : "Lua");
}

const struct interp_ops interp_lua_ops = {
	.name = "lua",
	.look = lua_look,
	.fork = lua_fork,
	.splice = lua_row_splice,
	.forget = lua_forget,
	.grab = lua_grab,
	.settle = lua_settle,
	.pl_title = "Lua",
	.pl_loop = "interpreter loop",
	.pl_is = lua_pl_is,
	.pl_new = pllua__new,
	.pl_free = pllua__free,
	.pl_anchor = lua_pl_anchor,
	.pl_read = lua_pl_read,
	.pl_copy = pllua__copy,
	.pl_record = pllua__record,
	.pl_resolve = pllua__resolve,
	.pl_said = lua_pl_said,
	.pl_finish = pllua__counts_said,
};


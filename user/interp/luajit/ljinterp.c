// SPDX-License-Identifier: MIT
/*
 * ljinterp.c - LuaJIT's row of the table of runtimes (ops.h): a LuaJIT
 * found in a traced process (luafind.h, by Lua's look) has its own
 * allocator, lj_alloc_f (ljfind.h), probed as an allocator with
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
#include "interp/lua/luainterp.h"
#include "interp/luajit/ljfind.h"
#include "interp/luajit/ljproc.h"
#include "interp/luajit/ljproto.h"
#include "interp/splice.h"
#include "msg.h"
#include "stacks.h"

/* Its row, below (rooms.c names it). */
extern const struct interp_ops interp_luajit_ops;

/* @p's LuaJIT (its room slot's, when this row made it), or NULL. */
static inline struct lj_proc *lj_of(const struct iproc *p)
{
	return interp__room(p, &interp_luajit_ops);
}

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

/* struct lua_room's steps on a struct lj_proc (luainterp.h). */
static bool lj_has_state(const void *vm)
{
	return lj_proc__base(vm)->main != 0;
}

static int lj_set_state(void *vm, uint64_t main, uint32_t tid)
{
	return lj_proc__set_state(vm, main, tid);
}

static int lj_find_state(void *vm, const uint64_t *words, size_t n, uint32_t tid)
{
	return lj_proc__find_state(vm, words, n, tid);
}

static void lj_bpf(const void *vm, struct hs_lua_proc *out)
{
	lj_proc__bpf(vm, out);
}

static const struct lua_room lj_room = {
	.has_state = lj_has_state, .set_state = lj_set_state, .find_state = lj_find_state,
	.bpf = lj_bpf,
};

/* Read @p's LuaJIT frames from now on (its file @path, found as @vm says). */
static int lj_turn_on(struct interp *ip, struct iproc *p, const char *path,
		      const struct lua_vm_info *vm, const struct lj_layout *ly, uint64_t bias,
		      enum interp_when when)
{
	struct hs_interp_proc cfg;
	int err;

	interp__set_room(p, &interp_luajit_ops, lj_proc__new(p->pid, vm, ly, bias));
	p->pending = htab__new(8, NULL, NULL);
	if (!lj_of(p) || !p->pending)
		return -ENOMEM;
	/* Launch mode: the state is made later; lua_newstate's return gives it. */
	err = interp__probe_at(ip, p, ip->o.skel->progs.lua_newstate_ret, true, path,
			       vm->newstate);
	if (!err && when == INTERP_RUNNING)
		lj_proc__find_state_stack(lj_of(p));
	if (err)
		return err;
	/* Its walk in the BPF side's interp_procs (its state known or not yet). */
	lua_room__config(ip, &lj_room, lj_of(p), &cfg);
	err = interp__turn_on(ip, p, &interp_luajit_ops, &cfg);
	if (err)
		return err;
	if (lj_proc__base(lj_of(p))->main)
		ip->c.lua_states++;
	return 0;
}

/* LuaJIT's lua_vm (ops.h): Lua's look found it. */
static bool lj_look(struct interp *ip, struct iproc *p, const char *path, const char *shown,
		    const struct lua_vm_info *vm, uint64_t bias, enum interp_when when)
{
	const struct lj_layout *ly;
	struct lj_allocf af;
	char sizes[64];
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
	ly = lj_layout__find(af.gg_size);
	if (ip->o.lua && !ly) {
		ip->c.refused++;
		lj_layout__sizes(sizes, sizeof(sizes));
		elog("pid %d runs LuaJIT (%s): its objects are live blocks (its allocator lj_alloc_f "
		     "probed); its frames are not read: its state is %u bytes, not the %s of a "
		     "LuaJIT 2.1 (GC64) whose layout heapsnoop knows (Debian 12's and 13's, on this "
		     "architecture)", p->pid, shown, af.gg_size, sizes);
		return true;
	}
	if (!ip->o.lua) {
		elog("pid %d runs LuaJIT (%s): its objects are live blocks (its allocator lj_alloc_f "
		     "probed)%s; its frames are not read (--interp without lua)", p->pid, shown,
		     when == INTERP_RUNNING ? ", those it allocated before tracing began not seen" :
					      "");
		return true;
	}
	err = lj_turn_on(ip, p, path, vm, ly, bias, when);
	if (err) {
		ip->c.refused++;
		elog("pid %d runs LuaJIT (%s): its objects are live blocks, but its frames cannot "
		     "be read: %s", p->pid, shown, strerror(-err));
		interp__reset(ip, p);
		p->looked = true;
		return true;
	}
	p->refused = false;
	elog("pid %d runs LuaJIT 2.1 (%s): its objects are live blocks (its allocator "
	     "lj_alloc_f probed)%s; its frames are read (the layout of %s, its VM by the largest "
	     "FDE)%s", p->pid, shown,
	     when == INTERP_RUNNING ? ", those it allocated before tracing began not seen" : "",
	     ly->build,
	     when != INTERP_RUNNING || lj_proc__base(lj_of(p))->main ? "" :
	     ", once its state is found in an allocation's registers or stack");
	return true;
}

/* -f: a child of a LuaJIT process: the same state, its memory a copy, run by its one thread. */
static void lj_fork(struct interp *ip, struct iproc *pp, struct iproc *c)
{
	const struct lua_vmproc *pb = lj_proc__base(lj_of(pp));

	interp__set_room(c, &interp_luajit_ops,
			 lj_proc__new(c->pid, &pb->vm, lj_proc__layout(lj_of(pp)), pb->bias));
	c->pending = htab__new(8, NULL, NULL);
	c->looked = true;
	if (!lj_of(c) || !c->pending) {
		interp__reset(ip, c);
		return;
	}
	if (pb->main)
		lj_proc__set_state(lj_of(c), pb->main, (uint32_t)c->pid);
	interp__forked_on(ip, c, &interp_luajit_ops);
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

/* LuaJIT's splice (ops.h). */
static uint32_t lj_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			  uint64_t seq, struct pending *pd, const uint64_t *native, uint32_t n,
			  bool native_cut, const struct unwind_grab *grab, uint64_t *out,
			  uint32_t max, uint32_t *flags)
{
	const struct lua_frame *f;
	struct lua_intern_ctx c = { ip, (pid_t)ev->pid };
	struct splice_in in;
	bool stale;

	(void)seq;
	(void)grab;
	if (!pd) {
		/* Its state not known yet (-p), or not its thread: no frames, unmarked. */
		if (!lua_room__state(ip, p, &lj_room, lj_of(p), ev))
			ip->c.no_frames++;
		return interp__copy_native(native, n, out, max);
	}
	if (!lua_room__state(ip, p, &lj_room, lj_of(p), ev)) {
		ip->c.lost++;
		*flags = STACK_FAULT;
		return interp__copy_native(native, n, out, max);
	}
	f = (const struct lua_frame *)pd->f;
	for (uint32_t i = 0; i < pd->nr; i++) {
		ip->iframes[i] = lj_proc__frame_addr(lj_of(p), f, pd->nr, i, lua_room__intern, &c,
						     &stale);
		ip->c.lua_stale += stale;
	}
	in = (struct splice_in){ .native = native, .nnative = n, .native_cut = native_cut,
				 .iframes = ip->iframes, .seg_end = ip->seg_end,
				 /* A coroutine's resumers were not read: their VM frames stay. */
				 .interp_cut = (pd->flags & HS_EVF_TRUNCATED) ||
					       (pd->nr && (f[0].pos & HS_LUA_F_CORO)),
				 .is_eval = lj_proc__in_vm, .ctx = lj_of(p) };
	in.nseg = lj_segs(lj_of(p), f, pd->nr, native, n, native_cut || in.interp_cut, ip->seg_end);
	ip->c.frames += pd->nr;
	ip->c.named += pd->nr;
	n = interp__splice_out(ip, &in, pd, pd->flags & HS_EVF_TRUNCATED, out, max, flags);
	pd->nr = 0;	/* taken */
	return n;
}

static void lj_forget(struct interp *ip, struct iproc *p)
{
	(void)ip;
	lj_proc__free(lj_of(p));
}

/* Its look: Lua's hands it a LuaJIT (lua_vm). */
const struct interp_ops interp_luajit_ops = {
	.name = "luajit",
	.lua_vm = lj_look,
	.fork = lj_fork,
	.splice = lj_splice,
	.forget = lj_forget,
};

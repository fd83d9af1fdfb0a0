/* SPDX-License-Identifier: MIT */
/*
 * ljproc.h - a traced process that runs LuaJIT 2.1 (luafind.h), in the
 * loader: its state found (its main thread: lua_newstate's return when
 * launched, else a scan of words of the running process for a LuaJIT
 * thread), the BPF side's walk set up for it (struct hs_lua_proc's lj_*,
 * user/interp/luajit/luajit.bpf.h), and what the walk sends named as LuaJIT's traceback
 * names it (ljnames.h), each distinct frame's text looked up once, then
 * by its words and its caller's (what its name depends on). Its runs of
 * the VM: a native frame in the VM's code (lj_vm_*, one FDE: luafind.h's
 * largest) runs the Lua frames down to one called from C (its link
 * FRAME_C or FRAME_CP: lua_call, lua_pcall, lua_cpcall enter the VM
 * anew), with the C functions they call above it.
 */
#ifndef HEAPSNOOP_LJPROC_H
#define HEAPSNOOP_LJPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/luaframe.h"
#include "interp/lua/luafind.h"
#include "interp/lua/luanames.h"
#include "interp/lua/luaproc.h"
#include "interp/lua/luawalk.h"
#include "interp/luajit/ljproto.h"

struct lj_proc;

/*
 * Process @pid runs LuaJIT build @ly (ljproto.h) as @vm found it, its file
 * mapped with @bias. NULL: no memory.
 */
struct lj_proc *lj_proc__new(pid_t pid, const struct lua_vm_info *vm,
			     const struct lj_layout *ly, uint64_t bias);
void lj_proc__free(struct lj_proc *lp);
/* What both Lua rooms' processes hold alike (lua/luaproc.h): the VM, its state. */
const struct lua_vmproc *lj_proc__base(const struct lj_proc *lp);
/* The build's layout it was made with (ljproto.h). */
const struct lj_layout *lj_proc__layout(const struct lj_proc *lp);

/* The state known: its main thread @main, run by thread @tid. 0, -ENOENT (NULL or odd). */
int lj_proc__set_state(struct lj_proc *lp, uint64_t main, uint32_t tid);

/* The state among @n words (registers, a stack's copy), or in the process's [stack]. 0, -ENOENT. */
int lj_proc__find_state(struct lj_proc *lp, const uint64_t *words, size_t n, uint32_t tid);
int lj_proc__find_state_stack(struct lj_proc *lp);

/* The BPF side's walk of this state into @out. */
void lj_proc__bpf(const struct lj_proc *lp, struct hs_lua_proc *out);

/* Is return address @ra in the VM's code? @lp is a struct lj_proc. */
bool lj_proc__in_vm(void *lp, uint64_t ra);

/*
 * The runs of the @nf frames @f: run k is frames [seg_end[k-1],
 * seg_end[k]); at most @max. Returns how many.
 */
uint32_t lj_proc__segs(const struct lua_frame *f, uint32_t nf, uint32_t *seg_end, uint32_t max);

/*
 * The address that names frame @i of the @nf frames @f in the records:
 * by its words and its caller's if seen before, else told (ljnames.h),
 * given one by @intern (lua/luaproc.h's lua_intern_fn) and kept. *@stale:
 * its prototype could not be read.
 */
uint64_t lj_proc__frame_addr(struct lj_proc *lp, const struct lua_frame *f, unsigned int nf,
			     unsigned int i, lua_intern_fn intern, void *ctx, bool *stale);

#endif /* HEAPSNOOP_LJPROC_H */

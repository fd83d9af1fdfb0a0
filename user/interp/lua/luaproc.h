/* SPDX-License-Identifier: MIT */
/*
 * luaproc.h - a traced process that runs a Lua VM (luafind.h), in the
 * loader: its state found (the main thread and global_State: from
 * lua_newstate's return when launched, else by a scan of words of the
 * running process for a thread of a state), the BPF side's walk set up
 * for it (struct hs_lua_proc), and what the walk sends named as Lua's
 * traceback names it (luanames.h), each frame's text (function, chunk,
 * line) looked up once per distinct frame, then by its words.
 *
 * The innermost Lua frame's line: its saved pc is the last one the VM
 * saved, which an instruction that allocates without saving it first
 * (OP_NEWTABLE's luaH_new, in 5.4 and 5.1) leaves behind by one or more
 * instructions. The exact pc is in a register of the innermost
 * luaV_execute frame, which the CFI unwinder recovers (unwind.h's
 * unwind_grab): the one callee-saved register whose value lies in the
 * running function's code is that pc (nothing else the loop keeps points
 * into its bytecode).
 */
#ifndef HEAPSNOOP_LUAPROC_H
#define HEAPSNOOP_LUAPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/luaframe.h"
#include "interp/lua/luafind.h"
#include "interp/lua/luanames.h"

struct lua_proc;

/*
 * What both Lua rooms' processes hold alike (struct lua_proc here, struct
 * lj_proc in luajit/ljproc.c, each its first member), read through
 * lua_proc__base() and lj_proc__base(): the process, the VM found in it
 * and where its file is mapped, a reader of its memory, its main thread
 * once known and the thread that runs it.
 */
struct lua_vmproc {
	pid_t pid;
	struct lua_vm_info vm;
	uint64_t bias;		/* runtime address - file offset */
	struct lua_reader rd;	/* @pid's memory (lua_proc__read_pid()) */
	uint64_t main;		/* its main thread; 0: not known (yet) */
	uint32_t owner;		/* the thread that runs it */
};

/* @b: process @pid runs @vm, its file mapped with @bias; its reader with layout @l (or NULL). */
void lua_vmproc__init(struct lua_vmproc *b, pid_t pid, const struct lua_vm_info *vm,
		      uint64_t bias, const struct lua_layout *l);

/*
 * Process @pid runs the VM @vm describes, its file mapped with @bias
 * (runtime address = file offset + @bias). NULL: no memory.
 */
struct lua_proc *lua_proc__new(pid_t pid, const struct lua_vm_info *vm, uint64_t bias);
void lua_proc__free(struct lua_proc *lp);
const struct lua_vmproc *lua_proc__base(const struct lua_proc *lp);

/*
 * The state, known: its main thread @main (lua_newstate's return, taken
 * as it is: its global_State beside it, as lua_newstate allocates both),
 * run by thread @tid. Returns 0, or -ENOENT for a NULL or odd pointer.
 */
int lua_proc__set_state(struct lua_proc *lp, uint64_t main, uint32_t tid);

/*
 * Look for the state among @n words (a thread's registers and a copy of
 * its stack: any of them may hold a lua_State *), run by thread @tid.
 * Returns 0 (found), -ENOENT.
 */
int lua_proc__find_state(struct lua_proc *lp, const uint64_t *words, size_t n, uint32_t tid);

/* The same in the words of the process's [stack] mapping (its main thread's). */
int lua_proc__find_state_stack(struct lua_proc *lp);

/*
 * What both Lua rooms' processes (this, luajit/ljproc.c) do alike:
 * @len bytes at @addr of process @pid into @buf (0, -EFAULT); a state
 * looked for by @find (a room's find_state on @lp) in the words of
 * @pid's [stack] from its top, a page at a time (0, -ENOENT, -ESRCH).
 */
int lua_proc__read_pid(pid_t pid, uint64_t addr, void *buf, size_t len);
int lua_proc__scan_stack(pid_t pid, int (*find)(void *lp, const uint64_t *words, size_t n,
						  uint32_t tid), void *lp);

/* The BPF side's walk of this state into @out. */
void lua_proc__bpf(const struct lua_proc *lp, struct hs_lua_proc *out);

/* Is return address @ra in the interpreter loop? In lua_resume? */
bool lua_proc__in_exec(const struct lua_proc *lp, uint64_t ra);
bool lua_proc__in_resume(const struct lua_proc *lp, uint64_t ra);

/* The interpreter loop's runtime range, for unwind_grab. */
void lua_proc__exec_range(const struct lua_proc *lp, uint64_t *lo, uint64_t *hi);

/*
 * The saved pc to name frame 0 of @f by, when it is a Lua frame: a
 * register of the innermost luaV_execute frame (@regs, @nregs of them,
 * @known a bit each) that points into its function's code; 0 (the
 * frame's own) if none does.
 */
uint64_t lua_proc__exact_pc(struct lua_proc *lp, const struct lua_frame *f,
			    const uint64_t *regs, uint32_t nregs, uint32_t known);

/*
 * 5.1's rule for a run's end (luasegs.h): is the calling instruction of
 * Lua frame @caller OP_CALL or OP_TAILCALL? @lp is a struct lua_proc.
 */
bool lua_proc__calls(void *lp, const struct lua_frame *caller);

/* Give a frame's text its address in the records (the caller's frame table). */
typedef uint64_t (*lua_intern_fn)(void *ctx, const struct lua_where *w);
/* From now on the records' address @old names what @new does (the caller's frame table). */
typedef void (*lua_rename_fn)(void *ctx, uint64_t old, uint64_t new);

/*
 * The address that names frame @i of the @nf frames @f (@pc: its exact
 * saved pc, 0: its own) in the records: looked up by the frame's words
 * and its caller's (what its name and line depend on), else told as Lua
 * tells it (luanames.h) and given one by @intern, then kept. A frame
 * named without a global name (5.4) is named again once package.loaded
 * was walked since; when that gives it another name, @rename (if not
 * NULL) renames the address it had, so the records made before say the
 * name too (a global set, or a module loaded, after the walk that named
 * it first: Lua's traceback at a dump names it so). *@stale: its
 * prototype could not be read ("?").
 */
uint64_t lua_proc__frame_addr(struct lua_proc *lp, const struct lua_frame *f, unsigned int nf,
			      unsigned int i, uint64_t pc, lua_intern_fn intern,
			      lua_rename_fn rename, void *ctx, bool *stale);

/*
 * A dump is about to be written: package.loaded walked now and every
 * kept frame named without a global name (5.4) named again from its
 * words, its address renamed by @rename where the name changed, so the
 * dump's frames say what Lua's traceback would say now (a function made
 * a global, a module loaded, after its records were named). Nothing
 * when no kept frame waits for a global name. Returns how many were
 * renamed.
 */
unsigned int lua_proc__settle(struct lua_proc *lp, lua_intern_fn intern, lua_rename_fn rename,
			      void *ctx);

/* The names of this state's frames (luanames.h). */
struct lua_names *lua_proc__names(struct lua_proc *lp);

/* The memory at @addr was freed: what was read there is forgotten. */
void lua_proc__forget(struct lua_proc *lp, uint64_t addr);

#endif /* HEAPSNOOP_LUAPROC_H */

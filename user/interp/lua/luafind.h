/* SPDX-License-Identifier: MIT */
/*
 * luafind.h - a Lua VM in an ELF file (a program with the VM inside, as
 * Debian's lua5.4, lua5.1 and luajit are, or a library an embedder
 * links): which VM its exported C API says it is, where lua_newstate is
 * (its return gives the state's main thread), and the ranges of code
 * whose native frames stand for Lua frames when a stack is spliced: the
 * VM's interpreter loop (luaV_execute; LuaJIT's assembler VM) and
 * lua_resume (a coroutine's frames end below it).
 *
 * The interpreter loop is not exported. It is named by the symbol table
 * of the file's separate debug file where one is installed (found by
 * build ID: /usr/lib/debug/.build-id/xx/yyyy.debug under the process's
 * root; Debian's liblua5.4-0-dbg, liblua5.1-0-dbg); else it is the
 * function with the largest FDE of the file's .eh_frame: luaV_execute in
 * Debian's four PUC builds (15210 bytes in lua5.4 against 2737 next;
 * 5930 in lua5.1 against 4093), LuaJIT's VM (one FDE over all of
 * lj_vm_*). Measured in issue 26's research; tests/interp/test_luafind.c
 * checks both ways agree where the debug files are installed.
 */
#ifndef HEAPSNOOP_LUAFIND_H
#define HEAPSNOOP_LUAFIND_H

#include <stdbool.h>
#include <stdint.h>

#include "interp/lua/lualayout.h"

struct lua_vm_info {
	enum lua_vm vm;
	uint64_t newstate;		/* lua_newstate's file offset (a uretprobe's) */
	uint64_t lnewstate;		/* luaL_newstate's (LuaJIT's own way in) */
	/* link-time addresses [lo, hi) */
	uint64_t exec_lo, exec_hi;	/* the interpreter loop */
	uint64_t resume_lo, resume_hi;	/* lua_resume */
	/* ... as file offsets (what a mapping gives an address: ra - start + offset) */
	uint64_t exec_off_lo, exec_off_hi, resume_off_lo, resume_off_hi;
	bool exec_by_symbol;		/* from the debug file's symbol table */
};

/*
 * Look at @path (reachable from here) for a Lua VM; its debug file is
 * looked for under @root ("" for this machine's, else a process's root as
 * seen from here: /proc/PID/root). Returns 0 with @out filled; -ENOENT:
 * no Lua VM (no lua_newstate exported); -ENOTSUP: a Lua this does not
 * read (5.2, 5.3; @out->vm LUA_VM_NONE); -ESRCH: no interpreter loop
 * found (no FDE); -errno if the file cannot be read.
 */
int lua_find__file(const char *path, const char *root, struct lua_vm_info *out);

#endif /* HEAPSNOOP_LUAFIND_H */

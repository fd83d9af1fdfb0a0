/* SPDX-License-Identifier: MIT */
/*
 * reach.h - can a launched command ever run an interpreter heapsnoop
 * walks (Python, Lua, LuaJIT)? Where it cannot, the walkers need not be
 * loaded: they are most of alloc_exit's verification, some 0.15 s of
 * every start on Linux 6.18 (docs/PERFORMANCE.md, "Start-up").
 *
 * The answer is no only when it is certain from the command's file: a
 * dynamically linked ELF that is no interpreter itself, needs no library
 * beyond the C and C++ runtimes', imports nothing that runs or loads
 * another program or library (exec*, posix_spawn*, system, popen,
 * wordexp, dlopen, syscall), with no LD_PRELOAD or LD_AUDIT set. A
 * script, a static binary, anything else: yes. An interpreter linked into
 * the program itself is found by the symbols heapsnoop needs to read it at
 * all (pyfind.c's _PyRuntime, luafind.c's lua_newstate), in .dynsym or
 * .symtab.
 */
#ifndef HEAPSNOOP_INTERP_REACH_H
#define HEAPSNOOP_INTERP_REACH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * May the process that execs the file at @path run an interpreter? If so,
 * why into @why (@cap bytes: "imports execvp", "needs libz.so.1", ...);
 * an unreadable file may. No errors.
 */
bool interp_reach__may_run(const char *path, char *why, size_t cap);

#endif /* HEAPSNOOP_INTERP_REACH_H */

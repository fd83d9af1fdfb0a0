/* SPDX-License-Identifier: MIT */
/*
 * luaframes.h - a PUC Lua's frames (5.4, 5.1) read by the collector at
 * each allocation it records (heapsnoop --preload, --interp lua): the
 * thread's state walked in place as the tracer's walk does
 * (user/interp/lua/luawalk.c), its frames appended to the native
 * stack as the live table's Lua words (include/heapsnoop/livetable.h,
 * LT_LUA_*), each new frame named in the process as Lua's traceback
 * names it (luanames.h) into the table, which heapsnoop splices at the
 * interpreter loop's frames (user/interp/lua/pllua.c).
 * docs/COLLECTOR.md, "Lua frames".
 */
#ifndef HEAPSNOOP_COLLECTOR_LUAFRAMES_H
#define HEAPSNOOP_COLLECTOR_LUAFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set by luaframes__init(): the walk is on. */
extern bool luaframes_on;
/* lua_newstate's code [lo, hi): a realloc(NULL, n) returning into it makes a state. */
extern uintptr_t luaframes_ns_lo, luaframes_ns_hi;
/* The state this thread made: its main thread (0: none), the block that holds it. */
extern __thread uint64_t luaframes_main __attribute__((tls_model("initial-exec")));
extern __thread uint64_t luaframes_block __attribute__((tls_model("initial-exec")));

/*
 * Find this process's Lua (its exported lua_newstate; 5.4 by
 * lua_resetthread, 5.1 by lua_setfenv) and say it in the table's header
 * (lua_vm, lua_newstate) before any stack holds its frames. Returns 0;
 * -ENOENT: no PUC Lua here (LuaJIT: said, not read).
 */
int luaframes__init(void);

/*
 * lua_newstate's block of @size bytes at @p (its LG: the main thread and
 * its global_State), made by this thread: zeroed (so that a walk during
 * lua_newstate finds no CallInfo yet), kept as this thread's state.
 */
void luaframes__newstate(void *p, size_t size);

/*
 * The stack @frames[@depth] (native, call site first; REC_CUT_* @cut)
 * with this thread's Lua frames after it, interned: its id, 0 if it
 * could not be kept. New frames named into the table first (system
 * calls and the C library's malloc: inside the collector's hook).
 */
uint32_t luaframes__intern(const uint64_t *frames, uint32_t depth, uint32_t cut);

#endif /* HEAPSNOOP_COLLECTOR_LUAFRAMES_H */

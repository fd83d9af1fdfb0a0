/* SPDX-License-Identifier: MIT */
/*
 * ljfind.h - LuaJIT's own allocator in its file (Debian's luajit, which
 * has the VM inside, or libluajit-5.1.so.2): lj_alloc_f, the lua_Alloc
 * every object of a state made by luaL_newstate comes from (its own
 * allocator over mmap, not malloc), found in lua_newstate's code
 * (ljdecode.h) and given its probe site (probesite.h), so that it is
 * probed as an allocator with lua_Alloc's realloc rules (bpf/alloc.h's
 * HS_FN_LUA_ALLOCF). docs/DESIGN.md, "Interpreter frames (Lua)".
 */
#ifndef HEAPSNOOP_LJFIND_H
#define HEAPSNOOP_LJFIND_H

#include <stdint.h>

#include "arch/probesite.h"

struct lj_allocf {
	uint64_t addr;		/* lj_alloc_f's link-time address */
	uint64_t site;		/* its probe site's file offset (a uprobe's and uretprobe's) */
	uint32_t gg_size;	/* the GG_State lua_newstate allocates (0: not seen) */
	struct probesite ps;	/* why there, for -v */
};

/*
 * lj_alloc_f in the LuaJIT file at @path (reachable from here) into
 * @out. Returns 0; -ENOENT: no lua_newstate, or not the shape
 * (ljdecode.h); -ERANGE: the address in no segment of the file;
 * -ENOTSUP: not on this architecture; -errno if the file cannot be read.
 */
int lj_find__allocf(const char *path, struct lj_allocf *out);

#endif /* HEAPSNOOP_LJFIND_H */

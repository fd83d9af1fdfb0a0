/* SPDX-License-Identifier: MIT */
/*
 * ljproto.h - a LuaJIT 2.1 function prototype (GCproto, GC64 builds) read
 * from outside the process (or from inside), and what it says of a frame
 * as LuaJIT's own traceback says it (lj_debug.c): the chunk
 * (lj_debug_shortname's, a file's name not cut), the line of a pc
 * (lj_debug_line over the 1, 2 or 4-byte line table), a local's name
 * (debug_varname over the compressed varinfo), an upvalue's
 * (lj_debug_uvname) and the name a calling instruction gives the
 * function it calls (lj_debug_funcname, lj_debug_slotname: "local",
 * "global", "field", "method", "upvalue", "metamethod").
 *
 * A prototype is one block (lj_parse.c's fs_finish: the GCproto, its
 * bytecode, its constants, upvalue slots and debug info, sizept bytes),
 * immutable while it lives: read whole, once. The layout (offsets in
 * bytes) is Debian 12's libluajit-5.1-2 (2.1.0~beta3+git20220320) as
 * offsetof() gives it on x86-64 from LuaJIT's lj_obj.h and lj_frame.h
 * of that date (the same on every LP64 GC64 build of 2.1), checked
 * against the binary: sizeof(GG_State) 6240 is what its lua_newstate
 * allocates.
 */
#ifndef HEAPSNOOP_LJPROTO_H
#define HEAPSNOOP_LJPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/lua/luaproto.h"

/* LuaJIT 2.1 GC64's offsets (lj_obj.h, lj_frame.h). */
#define LJ_L_GLREF	16	/* lua_State: its global_State */
#define LJ_L_BASE	32
#define LJ_L_STACK	56
#define LJ_L_CFRAME	80
#define LJ_L_SIZE	96
#define LJ_G_VMSTATE	184	/* global_State */
#define LJ_G_MAINTHREF	192
#define LJ_G_CUR_L	368
#define LJ_G_JIT_BASE	376
#define LJ_GG_G		96	/* GG_State: the main thread, then global_State */
#define LJ_GG_SIZE	6240	/* sizeof(GG_State): what lua_newstate allocates */
#define LJ_CF_PC	24	/* a C frame's saved pc (x86-64's CFRAME_OFS_PC; arm64's: 8) */
#define LJ_FN_FFID	10	/* GCfunc: 0 Lua, 1 C, else a fast function's number */
#define LJ_FN_NUPVALUES	11	/* ... its upvalues (the byte after) */
#define LJ_FN_PC	32	/* a Lua function's bytecode (just past its GCproto) */
#define LJ_FN_F		40	/* a C or fast function's entry */
#define LJ_PROTO_SIZE	104	/* sizeof(GCproto) */
#define LJ_GCT_THREAD	6	/* a thread's gct (~LJ_TTHREAD) */
#define LJ_GCT_PROTO	7	/* a prototype's (~LJ_TPROTO) */
#define LJ_GCT_STR	4	/* a string's (~LJ_TSTR) */

/* The largest prototype block read. */
#define LJ_PROTO_MAX (1u << 22)

struct lj_proto {
	uint64_t addr;			/* the GCproto's, the process's */
	uint8_t *b;			/* its whole block (sizept bytes) */
	uint32_t size, sizebc, sizeuv;
	int firstline, numline;
	const uint32_t *bc;		/* into @b */
	const uint8_t *lineinfo;	/* into @b, or NULL (stripped) */
	const char *uvinfo, *varinfo;	/* into @b, or NULL */
	uint64_t k;			/* the constants' middle, the process's */
	char *chunk;			/* lj_debug_shortname's, not cut */
	char **kstr;			/* strings read for names, by constant (~index) */
	uint32_t sizekgc;
};

/*
 * Read the prototype at @addr through @rd (its layout not used: LuaJIT's
 * is above). Returns 0; -EFAULT; -ESTALE (not a prototype now: its gct or
 * sizes); -ENOMEM.
 */
int lj_proto__read(const struct lua_reader *rd, uint64_t addr, struct lj_proto *p);
void lj_proto__fini(struct lj_proto *p);

/* The position of the instruction a saved pc (the next one's address) is at; -1: not @p's. */
int lj_proto__pos(const struct lj_proto *p, uint64_t pc);

/* The line of position @pos (lj_debug_line); 0 if not known. */
int lj_proto__line(const struct lj_proto *p, int pos);

/* "main" (the main chunk) or "Lua", as lua_getinfo's what says. */
bool lj_proto__is_main(const struct lj_proto *p);

/*
 * The name the instruction at position @pos of @p gives the function it
 * calls (lj_debug_funcname's, from the calling frame): *@what ("local",
 * "global", "field", "method", "upvalue", "metamethod"), *@name, both
 * living as long as @p. Returns 0, or -ENOENT: none.
 */
int lj_proto__callname(const struct lua_reader *rd, struct lj_proto *p, int pos,
		       const char **what, const char **name);

/*
 * Is @addr a LuaJIT thread (its gct; its global_State's main thread a
 * thread whose global_State is the same)? Then *@main is that main
 * thread. Returns 0, -ENOENT.
 */
int lj_state__main(const struct lua_reader *rd, uint64_t addr, uint64_t *main);

#endif /* HEAPSNOOP_LJPROTO_H */

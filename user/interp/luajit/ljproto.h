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
 * immutable while it lives: read whole, once.
 *
 * The layout (offsets in bytes) as offsetof() gives it from LuaJIT's
 * lj_obj.h, lj_frame.h, lj_jit.h and lj_dispatch.h, compiled by GCC for
 * x86-64 and for arm64, of the two 2.1 builds Debian ships: 2.1.0~beta3
 * (git 2022-03-20: Debian 12's libluajit-5.1-2) and OpenResty's 2.1
 * (20250117: Debian 13's). Every offset below is the same in the four;
 * what differs is struct lj_layout's: OpenResty's lua_State has two more
 * words (exdata, exdata2), so its global_State is 16 bytes further into
 * the GG_State; a C frame's saved pc is at 24 on x86-64, 8 on arm64
 * (CFRAME_OFS_PC); and the jit_State's size (x86-64's has three more
 * 8-byte backend constants, k64) makes the GG_State, what lua_newstate allocates (ljdecode.h reads it),
 * 6240 / 6304 bytes on x86-64, 6216 / 6280 on arm64: the size names the
 * build. Checked against the binaries: Debian 12's on x86-64 (this
 * machine's luajit: 6240), Debian 12's and 13's on arm64 (6216, 6280, and
 * 13's frames read in the arm64 guest, tests/arm64/).
 */
#ifndef HEAPSNOOP_LJPROTO_H
#define HEAPSNOOP_LJPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/lua/luaproto.h"

/* LuaJIT 2.1 GC64's offsets (lj_obj.h, lj_frame.h), the same in every build above. */
#define LJ_L_GLREF	16	/* lua_State: its global_State */
#define LJ_L_BASE	32
#define LJ_L_STACK	56
#define LJ_L_CFRAME	80
#define LJ_G_VMSTATE	184	/* global_State */
#define LJ_G_MAINTHREF	192
#define LJ_G_CUR_L	368
#define LJ_G_JIT_BASE	376
#if defined(__aarch64__)
#define LJ_CF_PC	8	/* a C frame's saved pc (arm64's CFRAME_OFS_PC) */
#else
#define LJ_CF_PC	24	/* a C frame's saved pc (x86-64's CFRAME_OFS_PC) */
#endif
#define LJ_FN_FFID	10	/* GCfunc: 0 Lua, 1 C, else a fast function's number */
#define LJ_FN_NUPVALUES	11	/* ... its upvalues (the byte after) */
#define LJ_FN_PC	32	/* a Lua function's bytecode (just past its GCproto) */
#define LJ_FN_F		40	/* a C or fast function's entry */
#define LJ_PROTO_SIZE	104	/* sizeof(GCproto) */
#define LJ_GCT_THREAD	6	/* a thread's gct (~LJ_TTHREAD) */
#define LJ_GCT_PROTO	7	/* a prototype's (~LJ_TPROTO) */
#define LJ_GCT_STR	4	/* a string's (~LJ_TSTR) */

/* A build of LuaJIT whose layout is known, on this architecture. */
struct lj_layout {
	uint32_t gg_size;	/* sizeof(GG_State): what lua_newstate allocates */
	uint32_t gg_g;		/* offsetof(GG_State, g): sizeof(lua_State), the main thread's */
	const char *build;	/* which LuaJIT, in words */
};

/* The known build whose GG_State is @gg_size bytes on this architecture, or NULL. */
const struct lj_layout *lj_layout__find(uint32_t gg_size);

/* The sizes of the known builds' GG_States, "6240 or 6304", into @buf of @len bytes. */
void lj_layout__sizes(char *buf, size_t len);

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
 * Is @addr a thread of LuaJIT build @ly (its gct; its global_State's
 * main thread a thread whose global_State is the same, @ly->gg_g bytes
 * past it in their GG_State)? Then *@main is that main thread. Returns
 * 0, -ENOENT.
 */
int lj_state__main(const struct lua_reader *rd, const struct lj_layout *ly, uint64_t addr,
		   uint64_t *main);

#endif /* HEAPSNOOP_LJPROTO_H */

/* SPDX-License-Identifier: MIT */
/*
 * luanames.h - a Lua state's frames (luaframe.h's words, from the BPF side
 * or luawalk.h) told as Lua's own traceback tells them: the function as
 * luaL_traceback's pushfuncname names it (5.4: "function 'mod.leaf'",
 * "local 'f'", "method 'push'", "main chunk", "function <mod.lua:4>",
 * "?"; 5.1's db_errorfb: "function 'leaf'", "main chunk", "function
 * <mod.lua:4>", "?"), the chunk ("main.lua", "[C]") and the line. Each
 * prototype read once and kept until forgotten (its memory freed); the
 * global names (luaglobal.h) read when first needed and again when a
 * function has none, at most once a second.
 */
#ifndef HEAPSNOOP_LUANAMES_H
#define HEAPSNOOP_LUANAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "interp/lua/luaproto.h"
#include "interp/lua/luawalk.h"

/* The longest function text (the rest cut). */
#define LUA_FUNC_TEXT 512

struct lua_where {
	char function[LUA_FUNC_TEXT];
	const char *file;	/* lives as long as the lua_names, or until forgotten */
	int line;		/* -1: none (a C function, no line information) */
	/*
	 * 5.4: named without a global name, which a later walk of
	 * package.loaded may give it (a module loaded, a global set since):
	 * see lua_names__globals_due().
	 */
	bool provisional;
};

struct lua_names;

/*
 * Names for the state whose global_State is at @g (0: no global names),
 * read through @rd (copied). NULL: no memory.
 */
struct lua_names *lua_names__new(const struct lua_reader *rd, uint64_t g);
void lua_names__free(struct lua_names *n);

/* The memory at @addr was freed: a prototype read there is forgotten. */
void lua_names__forget(struct lua_names *n, uint64_t addr);

/*
 * Frame @i of the @nf frames @f (innermost first, as walked), with
 * @pc, if not 0, for its saved pc (the innermost frame's exact pc, from
 * the VM's own frame), into @w. Returns 0, or -ESTALE: its prototype
 * could not be read (@w then says "?" in "?").
 */
int lua_names__describe(struct lua_names *n, const struct lua_frame *f, unsigned int nf,
			unsigned int i, uint64_t pc, struct lua_where *w);

/* The prototype at @addr, read now if not known; NULL if it cannot be. */
struct lua_proto *lua_names__proto(struct lua_names *n, uint64_t addr);

struct lua_names_stats {
	unsigned int protos;		/* prototypes kept */
	unsigned int globals;		/* functions with a global name */
	unsigned int global_builds;	/* times package.loaded was walked */
	unsigned int stale;		/* prototypes that could not be read */
};

void lua_names__stats(const struct lua_names *n, struct lua_names_stats *st);

/*
 * Could a frame named provisionally (lua_where.provisional) when
 * package.loaded had been walked @gen times (lua_names__globals_gen())
 * get another name now: walked again since, or a walk allowed again (at
 * most one a second; as lua_names__tick() last saw the clock)?
 */
unsigned int lua_names__globals_gen(const struct lua_names *n);
bool lua_names__globals_due(const struct lua_names *n, unsigned int gen);
/*
 * Let the next function without a global name walk package.loaded at
 * once (not at most once a second): for a reader that names a frame once,
 * for good, as the collector does (user/interp/lua/luaframes.c).
 */
void lua_names__globals_now(struct lua_names *n);

/*
 * Walk package.loaded now, whatever the last walk's time (its backoff
 * kept): before a dump, whose frames are then named as Lua's traceback
 * names them at that moment. False: this state has no global names (5.1,
 * no global_State known). A walk that fails leaves none until the next.
 */
bool lua_names__walk_now(struct lua_names *n);

/* Read the clock for lua_names__globals_due(): once a stack's frames, not once a frame. */
void lua_names__tick(struct lua_names *n);

#endif /* HEAPSNOOP_LUANAMES_H */

/* SPDX-License-Identifier: MIT */
/*
 * luaproto.h - what a Lua function prototype (Proto) says of a frame, as
 * Lua's own traceback says it: its chunk (luaO_chunkid's short source),
 * the line of an instruction (luaG_getfuncline, 5.1's lineinfo[]), and
 * the name its caller's calling instruction gives it (ldebug.c's
 * funcnamefromcode, getobjname and findsetreg in 5.4; getfuncname,
 * getobjname and symbexec in 5.1): "local 'f'", "method 'push'",
 * "field 'leaf'", "upvalue 'cb'", "global 'print'", "for iterator 'for
 * iterator'", "metamethod 'index'". Read through a reader the caller
 * gives (the tracer's reads another process, the collector its own
 * memory): nothing of Lua's C API is called, the layout is lualayout.h's.
 *
 * A Proto's code, line tables, local variables and upvalue names are
 * immutable for its life: read once, at first sight; the strings a name
 * needs are read when it is first asked for, then kept.
 */
#ifndef HEAPSNOOP_LUAPROTO_H
#define HEAPSNOOP_LUAPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "interp/lua/lualayout.h"

/* Read @len bytes at @addr into @buf: 0, or -errno (-EFAULT: not there). */
typedef int (*lua_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The largest Proto read (its code and tables), and strings' bytes kept. */
#define LUA_PROTO_MAX_CODE	(1u << 22)
#define LUA_STR_MAX		4096

struct lua_reader {
	const struct lua_layout *l;
	lua_read_fn read;
	void *ctx;
};

struct lua_proto {
	uint64_t addr;
	const struct lua_layout *l;
	int linedefined, lastlinedefined;
	char *chunk;		/* the short source, as Lua's traceback gives it */
	uint64_t code_addr;	/* the process's, to turn a saved pc into an index */
	uint32_t *code;
	int sizecode;
	/* lines: 5.4's deltas and absolute lines; 5.1's one line a pc */
	int8_t *lineinfo;
	int *lineinfo51;
	int sizelineinfo;
	struct lua_absline { int pc, line; } *abs;
	int sizeabs;
	/* names: local variables, upvalue names (TString *), constants */
	struct lua_locvar { uint64_t name; int startpc, endpc; char *text; } *locvars;
	int sizelocvars;
	uint64_t *upvalnames;
	char **upvaltexts;
	int sizeupvalues;
	uint64_t k_addr;
	int sizek;
	char **ktexts;		/* constants' strings, read when asked */
	uint8_t *ktexts_read;
	uint8_t *child_nups;	/* 5.1: each nested Proto's upvalues (symbexec's OP_CLOSURE) */
	int sizep;
};

/*
 * Read the Proto at @addr into @p (free with lua_proto__fini). Returns 0;
 * -EFAULT (not readable); -ESTALE (not a Proto now: its tag or sizes are
 * not a Proto's); -ENOMEM.
 */
int lua_proto__read(const struct lua_reader *rd, uint64_t addr, struct lua_proto *p);
void lua_proto__fini(struct lua_proto *p);

/*
 * The index of the instruction a frame is at, from its saved pc (the
 * address of the next instruction: currentpc()); -1 if it is none of @p's.
 */
int lua_proto__pc(const struct lua_proto *p, uint64_t savedpc);

/* The line of instruction @pc; -1 if not known (no line info, or @pc out of range). */
int lua_proto__line(const struct lua_proto *p, int pc);

/*
 * The name a call from instruction @pc of @p gives the function it
 * calls, as Lua's getfuncname does: *@what the kind ("local", "global",
 * "field", "method", "upvalue", "constant", "for iterator", "metamethod"),
 * *@name the name; both point at strings that live as long as @p.
 * Returns 0, or -ENOENT: no name (Lua's traceback then says
 * "function <chunk:line>").
 */
int lua_proto__callname(const struct lua_reader *rd, struct lua_proto *p, int pc,
			const char **what, const char **name);

/*
 * A string object's bytes at @addr as a malloc'ed NUL-terminated string
 * in *@out, at most LUA_STR_MAX bytes (the rest cut). Returns 0, -EFAULT,
 * -ESTALE (not a string), -ENOMEM.
 */
int lua_str__read(const struct lua_reader *rd, uint64_t addr, char **out);

/*
 * luaO_chunkid: the short source of a chunk named @source ("@main.lua"
 * -> "main.lua", "=stdin" -> "stdin", "x = 1" -> "[string \"x = 1\"]"),
 * into @out (@cap bytes); Lua cuts it at LUA_IDSIZE (60), this at @cap.
 * @vm: 5.1 and 5.4 differ for a string chunk with a newline.
 */
void lua_chunkid(enum lua_vm vm, const char *source, char *out, size_t cap);

#endif /* HEAPSNOOP_LUAPROTO_H */

// SPDX-License-Identifier: MIT
/*
 * ljnames.c - LuaJIT frames told as its traceback tells them (see
 * ljnames.h). The rules are lj_debug.c's luaL_traceback and
 * lua_getinfo's "Snl": a name only from a Lua caller that called the
 * frame by an instruction (its link a Lua frame's or a continuation's:
 * lj_debug_funcname finds no pc for a frame called from C, pcall's
 * included); a fast function without one is "[builtin#N]: at ADDR".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnoop/luaframe.h"
#include "htab.h"
#include "interp/luajit/ljnames.h"
#include "interp/luajit/ljproto.h"

struct lj_names {
	struct lua_reader rd;
	struct htab *protos;	/* address -> struct lj_proto */
	unsigned int stale;
	char builtin[32];	/* a fast function's "[builtin#N]", until the next frame's */
};

struct lj_names *lj_names__new(const struct lua_reader *rd)
{
	struct lj_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->rd = *rd;
	n->protos = htab__new(64, NULL, NULL);
	if (!n->protos) {
		free(n);
		return NULL;
	}
	return n;
}

void lj_names__free(struct lj_names *n)
{
	struct lj_proto *p;
	size_t pos = 0;

	if (!n)
		return;
	while ((p = htab__next(n->protos, &pos, NULL))) {
		lj_proto__fini(p);
		free(p);
	}
	htab__free(n->protos);
	free(n);
}

/* The prototype at @addr, read now if not kept; NULL if it cannot be. */
static struct lj_proto *proto(struct lj_names *n, uint64_t addr)
{
	uint64_t h = htab_hash2(addr, 0x17);
	struct lj_proto *p = htab__find(n->protos, h, (uintptr_t)addr);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (lj_proto__read(&n->rd, addr, p)) {
		n->stale++;
		free(p);
		return NULL;
	}
	if (htab__add(n->protos, h, (uintptr_t)addr, p)) {
		lj_proto__fini(p);
		free(p);
		return NULL;
	}
	return p;
}

/* Is frame @i the outermost of its thread? */
static bool outermost(const struct lua_frame *f, unsigned int nf, unsigned int i)
{
	return i + 1 >= nf || (f[i + 1].pos & HS_LUA_F_THREAD);
}

/* The name frame @i's caller gives it (lj_debug_funcname), or -ENOENT. */
static int callname(struct lj_names *n, const struct lua_frame *f, unsigned int nf,
		    unsigned int i, const char **what, const char **name)
{
	unsigned int link = HS_LJ_LINK(f[i].pos);
	const struct lua_frame *c;
	struct lj_proto *p;

	if (outermost(f, nf, i) || (link != HS_LJ_FRAME_LUA && link != HS_LJ_FRAME_CONT))
		return -ENOENT;
	c = &f[i + 1];
	if (HS_LUA_POS_KIND(c->pos) != HS_LUA_LUA || !(p = proto(n, c->code)))
		return -ENOENT;
	return lj_proto__callname(&n->rd, p, lj_proto__pos(p, HS_LUA_POS_PC(c->pos)), what, name);
}

int lj_names__describe(struct lj_names *n, const struct lua_frame *f, unsigned int nf,
		       unsigned int i, struct lua_where *w)
{
	const char *what = NULL, *name = NULL;
	unsigned int kind = HS_LUA_POS_KIND(f[i].pos);
	bool named = !callname(n, f, nf, i, &what, &name) && name;
	struct lj_proto *p;

	memset(w, 0, sizeof(*w));
	w->line = -1;
	if (named)
		snprintf(w->function, sizeof(w->function), "function '%s'", name);
	if (kind == HS_LUA_C || kind == HS_LUA_FAST) {
		if (named || kind == HS_LUA_C) {
			w->file = "[C]";
		} else {
			/* Lives until the next frame's: the caller interns it at once. */
			snprintf(n->builtin, sizeof(n->builtin), "[builtin#%u]",
				 (unsigned int)f[i].code);
			w->file = n->builtin;
		}
		if (!named)
			snprintf(w->function, sizeof(w->function), "at %#llx",
				 (unsigned long long)(kind == HS_LUA_C ? f[i].code :
								HS_LUA_POS_PC(f[i].pos)));
		return 0;
	}
	if (kind != HS_LUA_LUA || !(p = proto(n, f[i].code))) {
		snprintf(w->function, sizeof(w->function), "?");
		w->file = "?";
		return -ESTALE;
	}
	w->file = p->chunk;
	if (HS_LUA_POS_PC(f[i].pos)) {
		int pos = lj_proto__pos(p, HS_LUA_POS_PC(f[i].pos));

		w->line = pos >= 0 ? lj_proto__line(p, pos) : -1;
	}
	if (named)
		return 0;
	if (lj_proto__is_main(p))
		snprintf(w->function, sizeof(w->function), "main chunk");
	else
		snprintf(w->function, sizeof(w->function), "function <%s:%d>", p->chunk,
			 p->firstline);
	return 0;
}

void lj_names__stats(const struct lj_names *n, unsigned int *protos, unsigned int *stale)
{
	*protos = (unsigned int)htab__count(n->protos);
	*stale = n->stale;
}

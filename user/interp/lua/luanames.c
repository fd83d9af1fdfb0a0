// SPDX-License-Identifier: MIT
/*
 * luanames.c - frames told as Lua's traceback tells them (see
 * luanames.h): 5.4's luaL_traceback and pushfuncname (lauxlib.c),
 * getfuncname and funcnamefromcall (ldebug.c); 5.1's db_errorfb
 * (ldblib.c) and getfuncname (ldebug.c). A frame's caller is the next
 * frame of the same thread; the outermost frame of a thread was called
 * from its base CallInfo, a C one, which names nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heapsnoop/luaframe.h"
#include "htab.h"
#include "interp/lua/luaglobal.h"
#include "interp/lua/luanames.h"

/*
 * package.loaded is walked again for a function it did not name at most
 * this often, the first walks closer (GLOBALS_FIRST_NS, then twice as far
 * each time).
 */
#define GLOBALS_RETRY_NS 1000000000ULL
#define GLOBALS_FIRST_NS 1000000ULL

struct lua_names {
	struct lua_reader rd;
	uint64_t g;
	struct htab *protos;		/* address -> struct lua_proto */
	struct lua_globals *globals;
	uint64_t globals_ns;		/* when walked (CLOCK_MONOTONIC), 0: never */
	uint64_t globals_wait;		/* ns before the next walk: doubles up to the retry */
	bool walk_due;			/* a walk is allowed again (lua_names__tick()) */
	struct lua_names_stats st;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t addr_hash(uint64_t a)
{
	return htab_hash2(a, 0);
}

struct lua_names *lua_names__new(const struct lua_reader *rd, uint64_t g)
{
	struct lua_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->rd = *rd;
	n->g = g;
	n->protos = htab__new(64, NULL, NULL);
	if (!n->protos) {
		free(n);
		return NULL;
	}
	return n;
}

void lua_names__free(struct lua_names *n)
{
	struct lua_proto *p;
	size_t pos = 0;

	if (!n)
		return;
	while ((p = htab__next(n->protos, &pos, NULL))) {
		lua_proto__fini(p);
		free(p);
	}
	htab__free(n->protos);
	lua_globals__free(n->globals);
	free(n);
}

void lua_names__forget(struct lua_names *n, uint64_t addr)
{
	struct lua_proto *p = htab__delete(n->protos, addr_hash(addr), addr);

	if (p) {
		lua_proto__fini(p);
		free(p);
		n->st.protos--;
	}
}

struct lua_proto *lua_names__proto(struct lua_names *n, uint64_t addr)
{
	struct lua_proto *p = htab__find(n->protos, addr_hash(addr), addr);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (lua_proto__read(&n->rd, addr, p)) {
		free(p);
		n->st.stale++;
		return NULL;
	}
	if (htab__add(n->protos, addr_hash(addr), addr, p)) {
		lua_proto__fini(p);
		free(p);
		return NULL;
	}
	n->st.protos++;
	return p;
}

/* package.loaded walked now (@now): its names replace the last walk's. */
static void walk_globals(struct lua_names *n, uint64_t now)
{
	n->globals_ns = now;
	n->walk_due = false;
	lua_globals__free(n->globals);
	n->globals = NULL;
	n->st.global_builds++;
	if (!lua_globals__build(&n->rd, n->g, &n->globals))
		n->st.globals = lua_globals__count(n->globals);
}

/* The global name of @code (a prototype, or a C function), walking package.loaded as needed. */
static const char *global_name(struct lua_names *n, uint64_t code, bool lua)
{
	const char *name = NULL;
	uint64_t now;

	if (n->rd.l->vm != LUA_VM_54 || !n->g)
		return NULL;
	if (n->globals)
		name = lua_globals__name(n->globals, lua ? code : 0, lua ? 0 : code);
	if (name)
		return name;
	now = now_ns();
	if (n->globals_ns && now - n->globals_ns < n->globals_wait)
		return NULL;
	/*
	 * A program sets its globals and loads its modules as it starts: walks
	 * 1 ms, 2, 4 ... apart, then one a second, so a name missed at the
	 * start (the first walk often runs inside a require) comes soon.
	 */
	n->globals_wait = !n->globals_ns ? GLOBALS_FIRST_NS :
			  n->globals_wait * 2 < GLOBALS_RETRY_NS ? n->globals_wait * 2 :
			  GLOBALS_RETRY_NS;
	walk_globals(n, now);
	return n->globals ? lua_globals__name(n->globals, lua ? code : 0, lua ? 0 : code) : NULL;
}

bool lua_names__walk_now(struct lua_names *n)
{
	if (n->rd.l->vm != LUA_VM_54 || !n->g)
		return false;
	if (!n->globals_ns)
		n->globals_wait = GLOBALS_FIRST_NS;
	walk_globals(n, now_ns());
	return true;
}

/*
 * getfuncname: the name frame @i's caller gives it, from the caller's
 * calling instruction; *@what NULL when there is none.
 */
static void call_name(struct lua_names *n, const struct lua_frame *f, unsigned int nf,
		      unsigned int i, const char **what, const char **name)
{
	const struct lua_frame *c = i + 1 < nf ? &f[i + 1] : NULL;
	struct lua_proto *cp;

	*what = *name = NULL;
	/* The outermost frame of its thread: called from the base CallInfo. */
	if (!c || (c->pos & HS_LUA_F_THREAD) || (f[i].pos & HS_LUA_F_TAIL))
		return;
	if (n->rd.l->vm == LUA_VM_54 && (c->pos & HS_LUA_F_HOOKED)) {
		*what = "hook";
		*name = "?";
		return;
	}
	if (n->rd.l->vm == LUA_VM_54 && (c->pos & HS_LUA_F_FIN)) {
		*what = "metamethod";
		*name = "__gc";
		return;
	}
	if (HS_LUA_POS_KIND(c->pos) != HS_LUA_LUA)
		return;
	cp = lua_names__proto(n, c->code);
	if (cp)
		lua_proto__callname(&n->rd, cp, lua_proto__pc(cp, HS_LUA_POS_PC(c->pos)), what,
				    name);
}

int lua_names__describe(struct lua_names *n, const struct lua_frame *f, unsigned int nf,
			unsigned int i, uint64_t pc, struct lua_where *w)
{
	bool lua = HS_LUA_POS_KIND(f[i].pos) == HS_LUA_LUA, v54 = n->rd.l->vm == LUA_VM_54;
	const char *global = global_name(n, f[i].code, lua), *what, *name;
	struct lua_proto *p = NULL;

	w->line = -1;
	w->file = "[C]";
	w->provisional = v54 && n->g && !global;
	if (lua) {
		p = lua_names__proto(n, f[i].code);
		if (!p) {
			w->file = "?";
			snprintf(w->function, sizeof(w->function), "?");
			return -ESTALE;
		}
		w->file = p->chunk;
		w->line = lua_proto__line(p, lua_proto__pc(p, pc ? pc : HS_LUA_POS_PC(f[i].pos)));
	}
	if (global) {
		snprintf(w->function, sizeof(w->function), "function '%s'", global);
		return 0;
	}
	call_name(n, f, nf, i, &what, &name);
	if (what && v54)
		snprintf(w->function, sizeof(w->function), "%s '%s'", what, name);
	else if (what)
		snprintf(w->function, sizeof(w->function), "function '%s'", name);
	else if (p && !p->linedefined)
		snprintf(w->function, sizeof(w->function), "main chunk");
	else if (p)
		snprintf(w->function, sizeof(w->function), "function <%s:%d>", p->chunk,
			 p->linedefined);
	else
		snprintf(w->function, sizeof(w->function), "?");
	return 0;
}

void lua_names__stats(const struct lua_names *n, struct lua_names_stats *st)
{
	*st = n->st;
}

unsigned int lua_names__globals_gen(const struct lua_names *n)
{
	return n->st.global_builds;
}

void lua_names__globals_now(struct lua_names *n)
{
	n->globals_ns = 0;	/* as if never walked: global_name() walks at its next miss */
}

void lua_names__tick(struct lua_names *n)
{
	/* The coarse clock (ticks) is cheap, and enough for 1 ms and more. */
	n->walk_due = !n->globals_ns ||
		      clock_ns(CLOCK_MONOTONIC_COARSE) >= n->globals_ns + n->globals_wait;
}

bool lua_names__globals_due(const struct lua_names *n, unsigned int gen)
{
	return n->st.global_builds != gen || n->walk_due;
}

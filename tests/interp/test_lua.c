// SPDX-License-Identifier: MIT
/*
 * test_lua.c - the Lua frames' reading and naming (user/interp/lua/, user/interp/luajit/)
 * against Debian's real interpreters: lua5.4 and lua5.1 run
 * tests/interp/lua/chain.lua, which writes Lua's own traceback where its
 * call chain is deepest and waits there on stdin; this test finds the
 * state in the process's stack (a word that is a thread of a state),
 * walks its frames from outside as the BPF side does (luawalk.c) and
 * tells each as luanames.c does: every line of Lua's traceback must come
 * out the same, in order, and the walk must go on past the coroutine
 * into its resumer (coroutine.resume, top, the main chunk). The same for
 * Debian's luajit (-joff, run from chain.lua's folder: LuaJIT's traceback
 * cuts a long file name): its walk (ljwalk.c) and names (ljnames.c)
 * against LuaJIT's own traceback. An interpreter that is not installed is
 * skipped, said.
 *
 *   test_lua CHAIN_LUA
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heapsnoop/luaframe.h"
#include "interp/luajit/ljnames.h"
#include "interp/luajit/ljwalk.h"
#include "interp/lua/luanames.h"
#include "interp/lua/luawalk.h"
#include "luaharness.h"

static const char *chain;

/*
 * Wait until @pid is blocked in read() of its standard input (its
 * /proc/PID/syscall says syscall 0, fd 0): READY is written before
 * io.read() is called (io.stdout:flush() may still run when the line
 * comes), and only then are its frames the ones to compare. The event is
 * the process's own state, asked again until it is so (a bounded number
 * of times: false if it never is).
 */
static bool wait_in_read(pid_t pid)
{
	char path[64], buf[128];

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (long i = 0; i < 60L * 1000 * 1000; i++) {
		FILE *fp = fopen(path, "r");
		bool in_read = fp && fgets(buf, sizeof(buf), fp) && !strncmp(buf, "0 0x0 ", 6);

		if (fp)
			fclose(fp);
		if (in_read)
			return true;
		if (!fp)
			return false;
		sched_yield();
	}
	return false;
}

/* A frame as the version's traceback writes it (5.4: luaL_traceback; 5.1: db_errorfb). */
static void tb_line(enum lua_vm vm, const struct lua_where *w, char *out, size_t cap)
{
	char where[256];

	if (w->line > 0)
		snprintf(where, sizeof(where), "%s:%d:", w->file, w->line);
	else
		snprintf(where, sizeof(where), "%s:", w->file);
	if (vm == LUA_VM_51 && !strcmp(w->function, "?"))
		snprintf(out, cap, "%s ?", where);
	else
		snprintf(out, cap, "%s in %s", where, w->function);
}

/* What a VM's walk must say of chain.lua's frames, as its own traceback says them. */
struct want {
	enum lua_vm vm;
	unsigned int leaf_kind;		/* frame 0's kind: io.read, where leaf waits */
	const char *leaf, *resume;	/* io.read's name; coroutine.resume's */
	const char *chunk;		/* the main chunk's file; NULL: chain.lua's path */
};

/* A state's names, PUC Lua's (luanames.c) or LuaJIT's (ljnames.c). */
struct names {
	enum lua_vm vm;
	struct lua_names *puc;
	struct lj_names *lj;
};

static int describe(const struct names *nm, const struct lua_frame *f, unsigned int n,
		    unsigned int i, struct lua_where *w)
{
	if (nm->vm == LUA_VM_JIT)
		return lj_names__describe(nm->lj, f, n, i, w);
	return lua_names__describe(nm->puc, f, n, i, 0, w);
}

static void check_vm(const char *lua, const struct want *want)
{
	enum lua_vm vm = want->vm;
	struct lua_child c;
	char tb[64][512], got[1024];
	struct lua_frame f[128];
	struct names nm = { .vm = vm };
	struct lua_reader rd = { .l = vm == LUA_VM_JIT ? NULL : lua_layout__of(vm),
				 .read = lua_child__read };
	struct lua_where w;
	unsigned int n = 0;
	uint64_t main, g = 0;
	int ntb, k;

	if (lua_child__start(&c, lua, chain)) {
		printf("skip %s: not installed\n", lua);
		return;
	}
	rd.ctx = &c.pid;
	ntb = lua_child__traceback(&c, tb, 64);
	assert_true(ntb > 5);
	assert_true(wait_in_read(c.pid));
	main = lua_child__main(&rd, c.pid, vm, &g);
	assert_true(main != 0);
	k = vm == LUA_VM_JIT ? lj_walk(&rd, main, f, 128, &n) : lua_walk(&rd, main, f, 128, &n);
	assert_int_equal(k, (int)n);
	if (vm == LUA_VM_JIT)
		assert_non_null(nm.lj = lj_names__new(&rd));
	else
		assert_non_null(nm.puc = lua_names__new(&rd, g));
	/* The innermost frame is io.read, where leaf waits (LuaJIT's: a fast function named by its caller). */
	assert_true(n > (unsigned int)ntb + 3);
	assert_int_equal(HS_LUA_POS_KIND(f[0].pos), want->leaf_kind);
	assert_int_equal(describe(&nm, f, n, 0, &w), 0);
	assert_string_equal(w.file, "[C]");
	assert_string_equal(w.function, want->leaf);
	/* Then every line of the VM's own traceback, in order. */
	for (k = 0; k < ntb; k++) {
		assert_int_equal(describe(&nm, f, n, (unsigned int)k + 1, &w), 0);
		tb_line(vm, &w, got, sizeof(got));
		printf("%s: %s\n", lua, got);
		assert_string_equal(got, tb[k]);
	}
	/* Past the coroutine (the traceback stops there): its resumer's frames. */
	k++;
	assert_true(f[k].pos & HS_LUA_F_THREAD);
	assert_int_equal(describe(&nm, f, n, (unsigned int)k, &w), 0);
	assert_string_equal(w.function, want->resume);
	assert_int_equal(describe(&nm, f, n, (unsigned int)k + 1, &w), 0);
	assert_string_equal(w.function, "function 'top'");
	assert_int_equal(describe(&nm, f, n, (unsigned int)k + 2, &w), 0);
	assert_string_equal(w.function, "main chunk");
	assert_string_equal(w.file, want->chunk ? want->chunk : chain);
	/* Last, the C function lua.c (luajit.c) runs the script from (pmain). */
	assert_int_equal(n, (unsigned int)k + 4);
	assert_int_equal(describe(&nm, f, n, n - 1, &w), 0);
	if (vm == LUA_VM_JIT) {
		/* LuaJIT's: "at 0x...". */
		assert_string_equal(w.file, "[C]");
		assert_memory_equal(w.function, "at 0x", 5);
		lj_names__free(nm.lj);
	} else {
		assert_string_equal(w.function, "?");
		lua_names__free(nm.puc);
	}
	lua_child__stop(&c);
}

static void lua54(void **state)
{
	(void)state;
	check_vm("/usr/bin/lua5.4", &(struct want){ LUA_VM_54, HS_LUA_C, "function 'io.read'",
						"function 'coroutine.resume'" });
}

static void luajit(void **state)
{
	(void)state;
	check_vm("/usr/bin/luajit", &(struct want){ LUA_VM_JIT, HS_LUA_FAST, "function 'read'",
						"function 'resume'", "chain.lua" });
}

static void lua51(void **state)
{
	(void)state;
	check_vm("/usr/bin/lua5.1", &(struct want){ LUA_VM_51, HS_LUA_CCL, "function 'read'",
						"function 'resume'" });
}

/* luaO_chunkid's short sources, each version's (as their tracebacks show them). */
static void chunkids(void **state)
{
	static const struct {
		enum lua_vm vm;
		const char *source, *want;
	} ids[] = {
		{ LUA_VM_54, "@/srv/app/main.lua", "/srv/app/main.lua" },
		{ LUA_VM_54, "=stdin", "stdin" },
		{ LUA_VM_54, "return 1", "[string \"return 1\"]" },
		{ LUA_VM_54, "x = 1\nreturn x", "[string \"x = 1...\"]" },
		{ LUA_VM_51, "x = 1\nreturn x", "[string \"x = 1...\"]" },
		{ LUA_VM_54, "local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8",
		  "[string \"local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 + 7...\"]" },
		{ LUA_VM_51, "local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8",
		  "[string \"local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 +...\"]" },
	};
	char out[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		lua_chunkid(ids[i].vm, ids[i].source, out, sizeof(out));
		assert_string_equal(out, ids[i].want);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunkids),
		cmocka_unit_test_teardown(lua54, lua_child__teardown),
		cmocka_unit_test_teardown(lua51, lua_child__teardown),
		cmocka_unit_test_teardown(luajit, lua_child__teardown),
	};

	chain = lua_child__chain_arg(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

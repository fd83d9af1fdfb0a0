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
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "heapsnoop/luaframe.h"
#include "interp/luajit/ljnames.h"
#include "interp/luajit/ljproto.h"
#include "interp/luajit/ljwalk.h"
#include "interp/lua/luanames.h"
#include "interp/lua/luawalk.h"

static const char *chain;
static pid_t running;	/* killed by the teardown when a check fails */

struct child {
	pid_t pid;
	FILE *out;
	int in;
};

static int read_other(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	pid_t pid = *(pid_t *)ctx;

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* Run @lua on chain.lua (block); its stdout in c->out. */
static int start(const char *lua, struct child *c)
{
	int in[2], out[2];

	if (access(lua, X_OK) || pipe(in) || pipe(out))
		return -1;
	c->pid = fork();
	running = c->pid;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (strstr(lua, "luajit")) {
			/* From its folder: LuaJIT's traceback cuts a long file name. */
			char dir[4096];

			snprintf(dir, sizeof(dir), "%s", chain);
			*strrchr(dir, '/') = '\0';
			if (chdir(dir))
				_exit(127);
			execl(lua, lua, "-joff", "chain.lua", "block", (char *)NULL);
		}
		execl(lua, lua, chain, "block", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = fdopen(out[0], "r");
	return 0;
}

static void stop(struct child *c)
{
	running = 0;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	fclose(c->out);
	close(c->in);
}

/* The traceback's lines (tab dropped) up to READY, into @tb; how many. */
static int traceback(struct child *c, char tb[][512], int max)
{
	char line[512];
	int n = 0;
	bool in_tb = false;

	while (fgets(line, sizeof(line), c->out)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "READY"))
			return n;
		if (!strcmp(line, "stack traceback:"))
			in_tb = true;
		else if (in_tb && line[0] == '\t' && n < max)
			snprintf(tb[n++], sizeof(tb[0]), "%s", line + 1);
	}
	return -1;
}

/* The state's main thread, from the words of the process's [stack]. */
static uint64_t find_main(const struct lua_reader *rd, pid_t pid, uint64_t *g)
{
	char fn[64], line[512];
	unsigned long long s = 0, e = 0;
	uint64_t main = 0, page[512];
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	f = fopen(fn, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &s, &e) == 2)
			break;
	if (f)
		fclose(f);
	for (uint64_t a = s; a < e && !main; a += sizeof(page)) {
		if (rd->read(rd->ctx, a, page, sizeof(page)))
			continue;
		for (int i = 0; i < 512 && !main; i++)
			if (lua_state__main(rd, page[i], &main, g))
				main = 0;
	}
	return main;
}

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

static void check_vm(const char *lua, enum lua_vm vm)
{
	struct child c;
	char tb[64][512], got[1024];
	struct lua_frame f[128];
	struct lua_names *names;
	struct lua_reader rd = { .l = lua_layout__of(vm), .read = read_other };
	struct lua_where w;
	unsigned int n = 0;
	uint64_t main, g;
	int ntb, k;

	if (start(lua, &c)) {
		printf("skip %s: not installed\n", lua);
		return;
	}
	rd.ctx = &c.pid;
	ntb = traceback(&c, tb, 64);
	assert_true(ntb > 5);
	assert_true(wait_in_read(c.pid));
	main = find_main(&rd, c.pid, &g);
	assert_true(main != 0);
	k = lua_walk(&rd, main, f, 128, &n);
	assert_int_equal(k, (int)n);
	names = lua_names__new(&rd, g);
	assert_non_null(names);
	/* The innermost frame is io.read, where leaf waits: a C function. */
	assert_true(n > (unsigned int)ntb + 3);
	assert_int_equal(HS_LUA_POS_KIND(f[0].pos), vm == LUA_VM_54 ? HS_LUA_C : HS_LUA_CCL);
	assert_int_equal(lua_names__describe(names, f, n, 0, 0, &w), 0);
	assert_string_equal(w.file, "[C]");
	assert_string_equal(w.function, vm == LUA_VM_54 ? "function 'io.read'" : "function 'read'");
	/* Then every line of Lua's own traceback, in order. */
	for (k = 0; k < ntb; k++) {
		assert_int_equal(lua_names__describe(names, f, n, (unsigned int)k + 1, 0, &w), 0);
		tb_line(vm, &w, got, sizeof(got));
		printf("%s: %s\n", lua, got);
		assert_string_equal(got, tb[k]);
	}
	/* Past the coroutine (Lua's traceback stops there): its resumer's frames. */
	k++;
	assert_true(f[k].pos & HS_LUA_F_THREAD);
	assert_int_equal(lua_names__describe(names, f, n, (unsigned int)k, 0, &w), 0);
	assert_string_equal(w.function, vm == LUA_VM_54 ? "function 'coroutine.resume'" :
				       "function 'resume'");
	assert_int_equal(lua_names__describe(names, f, n, (unsigned int)k + 1, 0, &w), 0);
	assert_string_equal(w.function, vm == LUA_VM_54 ? "function 'top'" : "function 'top'");
	assert_int_equal(lua_names__describe(names, f, n, (unsigned int)k + 2, 0, &w), 0);
	assert_string_equal(w.function, "main chunk");
	assert_string_equal(w.file, chain);
	/* Last, the C function lua.c runs the script from (pmain). */
	assert_int_equal(n, (unsigned int)k + 4);
	assert_int_equal(lua_names__describe(names, f, n, n - 1, 0, &w), 0);
	assert_string_equal(w.function, "?");
	lua_names__free(names);
	stop(&c);
}

/*
 * The layout of the luajit these tests run, Debian 12's: its main thread
 * 96 bytes before its global_State on every architecture (ljlayout.c's
 * row; test_luafind checks the file's is that row).
 */
static const struct lj_layout deb12 = { .gg_g = 96, .build = "Debian 12's 2.1.0~beta3" };

/* LuaJIT's state: a word of its stack that is one of its threads (ljproto.h). */
static uint64_t find_lj_main(const struct lua_reader *rd, pid_t pid)
{
	char fn[64], line[512];
	unsigned long long s = 0, e = 0;
	uint64_t main = 0, page[512];
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	f = fopen(fn, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &s, &e) == 2)
			break;
	if (f)
		fclose(f);
	for (uint64_t a = s; a < e && !main; a += sizeof(page)) {
		if (rd->read(rd->ctx, a, page, sizeof(page)))
			continue;
		for (int i = 0; i < 512 && !main; i++)
			if (page[i] < 4096 || (page[i] & 7) || page[i] >> 47 ||
			    lj_state__main(rd, &deb12, page[i], &main))
				main = 0;
	}
	return main;
}

static void check_luajit(const char *lua)
{
	struct child c;
	char tb[64][512], got[1024];
	struct lua_frame f[128];
	struct lj_names *names;
	struct lua_reader rd = { .read = read_other };
	struct lua_where w;
	unsigned int n = 0;
	uint64_t main;
	int ntb, k;

	if (start(lua, &c)) {
		printf("skip %s: not installed\n", lua);
		return;
	}
	rd.ctx = &c.pid;
	ntb = traceback(&c, tb, 64);
	assert_true(ntb > 5);
	assert_true(wait_in_read(c.pid));
	main = find_lj_main(&rd, c.pid);
	assert_true(main != 0);
	k = lj_walk(&rd, main, f, 128, &n);
	assert_int_equal(k, (int)n);
	names = lj_names__new(&rd);
	assert_non_null(names);
	/* The innermost frame is io.read, where leaf waits: a fast function named by its caller. */
	assert_true(n > (unsigned int)ntb + 3);
	assert_int_equal(HS_LUA_POS_KIND(f[0].pos), HS_LUA_FAST);
	assert_int_equal(lj_names__describe(names, f, n, 0, &w), 0);
	assert_string_equal(w.file, "[C]");
	assert_string_equal(w.function, "function 'read'");
	/* Then every line of LuaJIT's own traceback, in order (it stops at the coroutine). */
	for (k = 0; k < ntb; k++) {
		assert_int_equal(lj_names__describe(names, f, n, (unsigned int)k + 1, &w), 0);
		tb_line(LUA_VM_JIT, &w, got, sizeof(got));
		printf("%s: %s\n", lua, got);
		assert_string_equal(got, tb[k]);
	}
	/* Past the coroutine: its resumer's frames, as the tracer tells them. */
	k++;
	assert_true(f[k].pos & HS_LUA_F_THREAD);
	assert_int_equal(lj_names__describe(names, f, n, (unsigned int)k, &w), 0);
	assert_string_equal(w.function, "function 'resume'");
	assert_int_equal(lj_names__describe(names, f, n, (unsigned int)k + 1, &w), 0);
	assert_string_equal(w.function, "function 'top'");
	assert_int_equal(lj_names__describe(names, f, n, (unsigned int)k + 2, &w), 0);
	assert_string_equal(w.function, "main chunk");
	assert_string_equal(w.file, "chain.lua");
	/* Last, the C function luajit.c runs the script from (pmain): "at 0x...". */
	assert_int_equal(n, (unsigned int)k + 4);
	assert_int_equal(lj_names__describe(names, f, n, n - 1, &w), 0);
	assert_string_equal(w.file, "[C]");
	assert_memory_equal(w.function, "at 0x", 5);
	lj_names__free(names);
	stop(&c);
}

static int kill_running(void **state)
{
	(void)state;
	if (running > 0) {
		kill(running, SIGKILL);
		waitpid(running, NULL, 0);
	}
	running = 0;
	return 0;
}

static void lua54(void **state)
{
	(void)state;
	check_vm("/usr/bin/lua5.4", LUA_VM_54);
}

static void luajit(void **state)
{
	(void)state;
	check_luajit("/usr/bin/luajit");
}

static void lua51(void **state)
{
	(void)state;
	check_vm("/usr/bin/lua5.1", LUA_VM_51);
}

/* luaO_chunkid's short sources, each version's (as their tracebacks show them). */
static void chunkids(void **state)
{
	char out[128];

	(void)state;
	lua_chunkid(LUA_VM_54, "@/srv/app/main.lua", out, sizeof(out));
	assert_string_equal(out, "/srv/app/main.lua");
	lua_chunkid(LUA_VM_54, "=stdin", out, sizeof(out));
	assert_string_equal(out, "stdin");
	lua_chunkid(LUA_VM_54, "return 1", out, sizeof(out));
	assert_string_equal(out, "[string \"return 1\"]");
	lua_chunkid(LUA_VM_54, "x = 1\nreturn x", out, sizeof(out));
	assert_string_equal(out, "[string \"x = 1...\"]");
	lua_chunkid(LUA_VM_51, "x = 1\nreturn x", out, sizeof(out));
	assert_string_equal(out, "[string \"x = 1...\"]");
	lua_chunkid(LUA_VM_54, "local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8", out, sizeof(out));
	assert_string_equal(out, "[string \"local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 + 7...\"]");
	lua_chunkid(LUA_VM_51, "local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8", out, sizeof(out));
	assert_string_equal(out, "[string \"local a_long_name = 1 + 2 + 3 + 4 + 5 + 6 +...\"]");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunkids),
		cmocka_unit_test_teardown(lua54, kill_running),
		cmocka_unit_test_teardown(lua51, kill_running),
		cmocka_unit_test_teardown(luajit, kill_running),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s CHAIN_LUA (an absolute path)\n", argv[0]);
		return 2;
	}
	chain = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}

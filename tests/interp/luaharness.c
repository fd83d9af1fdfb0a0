// SPDX-License-Identifier: MIT
/*
 * luaharness.c - the Lua walk tests' shared harness (luaharness.h): the
 * interpreter on chain.lua as a child, its memory and its state, the BPF
 * walk of tests/interp/luawalk.bpf.c at its next read(0) and the check of
 * its words against the loader's walk.
 */
#include <errno.h>
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
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "interp/luajit/ljproto.h"
#include "luaharness.h"

static pid_t running;	/* killed by the teardown when a check fails */

int lua_child__start(struct lua_child *c, const char *lua, const char *chain)
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

const char *lua_child__chain_arg(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CHAIN_LUA (an absolute path)\n", argv[0]);
		exit(2);
	}
	return argv[1];
}

void lua_child__stop(struct lua_child *c)
{
	running = 0;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	fclose(c->out);
	close(c->in);
}

int lua_child__teardown(void **state)
{
	(void)state;
	if (running > 0) {
		kill(running, SIGKILL);
		waitpid(running, NULL, 0);
	}
	running = 0;
	return 0;
}

int lua_child__traceback(struct lua_child *c, char tb[][512], int max)
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

int lua_child__read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	pid_t pid = *(pid_t *)ctx;

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * The layout of the luajit these tests run, Debian 12's: its main thread
 * 96 bytes before its global_State on every architecture (ljlayout.c's
 * row; test_luafind checks the file's is that row).
 */
static const struct lj_layout deb12 = { .gg_g = 96, .build = "Debian 12's 2.1.0~beta3" };

/* Whether @word is the state's main thread (*@main); LuaJIT's: an aligned user address first. */
static bool is_main(const struct lua_reader *rd, enum lua_vm vm, uint64_t word, uint64_t *main,
		    uint64_t *g)
{
	if (vm != LUA_VM_JIT)
		return !lua_state__main(rd, word, main, g);
	return word >= 4096 && !(word & 7) && !(word >> 47) &&
	       !lj_state__main(rd, &deb12, word, main);
}

uint64_t lua_child__main(const struct lua_reader *rd, pid_t pid, enum lua_vm vm, uint64_t *g)
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
			if (!is_main(rd, vm, page[i], &main, g))
				main = 0;
	}
	return main;
}

static int on_done(void *ctx, void *data, size_t len)
{
	(void)data;
	(void)len;
	*(bool *)ctx = true;
	return 0;
}

const struct lua_bpf_result *lua_child__bpf_walk(struct lua_child *c, struct bpf_object *obj,
						 const struct hs_lua_proc *lp)
{
	static uint8_t buf[65536];
	char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	struct bpf_map *cfg = bpf_object__find_map_by_name(obj, "walk_cfg");
	struct bpf_map *result = bpf_object__find_map_by_name(obj, "walk_result");
	struct bpf_map *done_map = bpf_object__find_map_by_name(obj, "walk_done");
	struct bpf_program *at_read = bpf_object__find_program_by_name(obj, "at_read");
	struct bpf_link *link;
	struct ring_buffer *rb;
	uint32_t zero = 0;
	bool done = false;

	assert_true(cfg && result && done_map && at_read);
	assert_true(bpf_map__value_size(result) <= sizeof(buf));
	assert_int_equal(bpf_map__update_elem(cfg, &zero, sizeof(zero), lp, sizeof(*lp), 0), 0);
	link = bpf_program__attach_uprobe_opts(
		at_read, c->pid, access(libc, R_OK) ? "libc.so.6" : libc, 0,
		&(struct bpf_uprobe_opts){ .sz = sizeof(struct bpf_uprobe_opts),
					   .func_name = "read" });
	assert_non_null(link);
	rb = ring_buffer__new(bpf_map__fd(done_map), on_done, &done, NULL);
	assert_non_null(rb);
	/* Half a line: read() returns it, and the C library reads again. */
	assert_int_equal(write(c->in, "x", 1), 1);
	while (!done)
		assert_true(ring_buffer__poll(rb, 60000) > 0);
	/* The walk is kept once (its first hit): the value is final now. */
	assert_int_equal(bpf_map__lookup_elem(result, &zero, sizeof(zero), buf,
					      bpf_map__value_size(result), 0), 0);
	ring_buffer__free(rb);
	bpf_link__destroy(link);
	return (const struct lua_bpf_result *)buf;
}

void lua_bpf_result__check(const struct lua_bpf_result *res, const struct lua_frame *f,
			   unsigned int n, const char *lua)
{
	printf("%s: %u frames by BPF (flags %#x), %u by the loader\n", lua, res->n, res->flags, n);
	assert_int_equal(res->flags, 0);
	assert_int_equal(res->n, n);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(res->w[2 * i], f[i].code);
		assert_int_equal(res->w[2 * i + 1], f[i].pos);
	}
	/* Past the coroutine: its resumer's frames are there. */
	for (unsigned int i = 0, seen = 0; i <= n; i++) {
		if (i == n) {
			assert_int_equal(seen, 1);
			break;
		}
		seen += !!(f[i].pos & HS_LUA_F_THREAD);
	}
}

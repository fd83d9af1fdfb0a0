// SPDX-License-Identifier: MIT
/*
 * test_ljbpf.c - the BPF side's LuaJIT walk (user/interp/luajit/luajit.bpf.h, loaded alone
 * from tests/interp/luawalk.bpf.c built with HS_WALK_LJ) against the outside walk (ljwalk.c),
 * word for word, on Debian's luajit (-joff) waiting where chain.lua's
 * call chain is deepest: the kernel's verifier takes it (bounded loops,
 * masked offsets, two global functions), it follows the coroutine to its
 * resumer as ljwalk does, and every frame's two words are the same, the
 * frame links' types the chain's (a continuation: the metamethod; C:
 * string.gsub's callback; pcall's). Run as root (BPF); luajit not
 * installed: skipped, said.
 *
 *   test_ljbpf CHAIN_LUA
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
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <cmocka.h>

#include "heapsnoop/luaframe.h"
#include "interp/luajit/ljproto.h"
#include "interp/luajit/ljwalk.h"
#include "ljwalk.skel.h"

static const char *chain;
static pid_t running;

static int read_other(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(*(pid_t *)ctx, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * The layout of the luajit these tests run, Debian 12's: its main thread
 * 96 bytes before its global_State on every architecture (ljlayout.c's
 * row; test_luafind checks the file's is that row).
 */
static const struct lj_layout deb12 = { .gg_g = 96, .build = "Debian 12's 2.1.0~beta3" };

static uint64_t find_main(const struct lua_reader *rd, pid_t pid)
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

/* The BPF side's offsets, as the tracer fills them (ljproc.c). */
static void proc_of(uint64_t main, pid_t pid, struct hs_lua_proc *lp)
{
	memset(lp, 0, sizeof(*lp));
	lp->main = main;
	lp->owner = (uint32_t)pid;
	lp->vm = HS_LUA_VM_JIT;
	lp->lj_l_g = LJ_L_GLREF;
	lp->lj_l_base = LJ_L_BASE;
	lp->lj_l_stack = LJ_L_STACK;
	lp->lj_l_cframe = LJ_L_CFRAME;
	lp->lj_g_cur_l = LJ_G_CUR_L;
	lp->lj_g_vmstate = LJ_G_VMSTATE;
	lp->lj_g_jit_base = LJ_G_JIT_BASE;
	lp->lj_cf_pc = LJ_CF_PC;
	lp->lj_fn_ffid = LJ_FN_FFID;
	lp->lj_fn_pc = LJ_FN_PC;
	lp->lj_fn_f = LJ_FN_F;
	lp->lj_proto_size = LJ_PROTO_SIZE;
}

static int on_done(void *ctx, void *data, size_t len)
{
	(void)data;
	(void)len;
	*(bool *)ctx = true;
	return 0;
}

static void check_vm(const char *lua)
{
	struct lua_reader rd = { .read = read_other };
	struct ljwalk_bpf *skel;
	struct ring_buffer *rb;
	struct lua_frame f[HS_LUA_MAX_FRAMES];
	struct hs_lua_proc lp;
	struct {
		uint32_t hits, n, flags, pad;
		uint64_t w[2 * HS_LUA_MAX_FRAMES];
	} *res;
	char line[512], libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	unsigned int n = 0;
	uint32_t zero = 0;
	unsigned int links[8] = { 0 };
	uint64_t main;
	bool done = false;
	int in[2], out[2];
	FILE *o;

	if (access(lua, X_OK)) {
		printf("skip %s: not installed\n", lua);
		return;
	}
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	running = fork();
	if (!running) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(lua, lua, "-joff", chain, "block", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	o = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), o) && strcmp(line, "READY\n"))
		;
	rd.ctx = &running;
	main = find_main(&rd, running);
	assert_true(main != 0);

	skel = ljwalk_bpf__open();
	assert_non_null(skel);
	skel->rodata->target_tgid = (uint32_t)running;
	assert_int_equal(ljwalk_bpf__load(skel), 0);
	proc_of(main, running, &lp);
	assert_int_equal(bpf_map__update_elem(skel->maps.walk_cfg, &zero, sizeof(zero), &lp,
					      sizeof(lp), 0), 0);
	skel->links.at_read = bpf_program__attach_uprobe_opts(
		skel->progs.at_read, running, access(libc, R_OK) ? "libc.so.6" : libc, 0,
		&(struct bpf_uprobe_opts){ .sz = sizeof(struct bpf_uprobe_opts),
					   .func_name = "read" });
	assert_non_null(skel->links.at_read);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.walk_done), on_done, &done, NULL);
	assert_non_null(rb);
	/* Half a line: read() returns it, and the C library reads again. */
	assert_int_equal(write(in[1], "x", 1), 1);
	while (!done)
		assert_true(ring_buffer__poll(rb, 60000) > 0);
	/*
	 * The loader's walk now: the script is inside io.read() until a whole
	 * line comes (READY was said before it called it: io.stdout:flush()
	 * may still have been running then).
	 */
	assert_true(lj_walk(&rd, main, f, HS_LUA_MAX_FRAMES, &n) > 10);
	{
		static uint8_t buf[65536];

		assert_int_equal(bpf_map__lookup_elem(skel->maps.walk_result, &zero, sizeof(zero),
						      buf, bpf_map__value_size(skel->maps.walk_result),
						      0), 0);
		res = (void *)buf;
	}
	printf("%s: %u frames by BPF (flags %#x), %u by the loader\n", lua, res->n, res->flags, n);
	assert_int_equal(res->flags, 0);
	assert_int_equal(res->n, n);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(res->w[2 * i], f[i].code);
		assert_int_equal(res->w[2 * i + 1], f[i].pos);
		links[HS_LJ_LINK(f[i].pos)]++;
	}
	/* __index by a continuation, the callback from C (gsub), via_gsub by pcall. */
	assert_true(links[HS_LJ_FRAME_CONT] >= 1);
	assert_true(links[HS_LJ_FRAME_C] >= 1);
	assert_true(links[HS_LJ_FRAME_PCALL] >= 1);
	assert_true(links[HS_LJ_FRAME_CP] >= 1);	/* the main chunk, pmain */
	/* Past the coroutine: its resumer's frames are there. */
	for (unsigned int i = 0, seen = 0; i <= n; i++) {
		if (i == n) {
			assert_int_equal(seen, 1);
			break;
		}
		seen += !!(f[i].pos & HS_LUA_F_THREAD);
	}
	ring_buffer__free(rb);
	ljwalk_bpf__destroy(skel);
	kill(running, SIGKILL);
	waitpid(running, NULL, 0);
	running = 0;
	fclose(o);
	close(in[1]);
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

static void luajit(void **state)
{
	(void)state;
	check_vm("/usr/bin/luajit");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(luajit, kill_running),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s CHAIN_LUA (an absolute path)\n", argv[0]);
		return 2;
	}
	chain = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}

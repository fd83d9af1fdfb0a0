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
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "heapsnoop/luaframe.h"
#include "interp/luajit/ljproto.h"
#include "interp/luajit/ljwalk.h"
#include "luaharness.h"
#include "ljwalk.skel.h"

static const char *chain;

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

static void check_vm(const char *lua)
{
	struct lua_reader rd = { .read = lua_child__read };
	const struct lua_bpf_result *res;
	struct ljwalk_bpf *skel;
	struct lua_frame f[HS_LUA_MAX_FRAMES];
	struct hs_lua_proc lp;
	struct lua_child c;
	unsigned int n = 0;
	unsigned int links[8] = { 0 };
	uint64_t main;

	if (lua_child__start(&c, lua, chain)) {
		printf("skip %s: not installed\n", lua);
		return;
	}
	(void)lua_child__traceback(&c, NULL, 0);
	rd.ctx = &c.pid;
	main = lua_child__main(&rd, c.pid, LUA_VM_JIT, NULL);
	assert_true(main != 0);

	skel = ljwalk_bpf__open();
	assert_non_null(skel);
	skel->rodata->target_tgid = (uint32_t)c.pid;
	assert_int_equal(ljwalk_bpf__load(skel), 0);
	proc_of(main, c.pid, &lp);
	res = lua_child__bpf_walk(&c, skel->obj, &lp);
	/*
	 * The loader's walk now: the script is inside io.read() until a whole
	 * line comes (READY was said before it called it: io.stdout:flush()
	 * may still have been running then).
	 */
	assert_true(lj_walk(&rd, main, f, HS_LUA_MAX_FRAMES, &n) > 10);
	lua_bpf_result__check(res, f, n, lua);
	for (unsigned int i = 0; i < n; i++)
		links[HS_LJ_LINK(f[i].pos)]++;
	/* __index by a continuation, the callback from C (gsub), via_gsub by pcall. */
	assert_true(links[HS_LJ_FRAME_CONT] >= 1);
	assert_true(links[HS_LJ_FRAME_C] >= 1);
	assert_true(links[HS_LJ_FRAME_PCALL] >= 1);
	assert_true(links[HS_LJ_FRAME_CP] >= 1);	/* the main chunk, pmain */
	ljwalk_bpf__destroy(skel);
	lua_child__stop(&c);
}

static void luajit(void **state)
{
	(void)state;
	check_vm("/usr/bin/luajit");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(luajit, lua_child__teardown),
	};

	chain = lua_child__chain_arg(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

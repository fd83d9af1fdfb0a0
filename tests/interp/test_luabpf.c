// SPDX-License-Identifier: MIT
/*
 * test_luabpf.c - the BPF side's Lua walk (user/interp/lua/lua.bpf.h, loaded alone from
 * tests/interp/luawalk.bpf.c) against the loader's (luawalk.c), word for
 * word, on Debian's lua5.4 and lua5.1 waiting where chain.lua's call
 * chain is deepest: the kernel's verifier takes it (bounded loops, masked
 * offsets), it follows the coroutine to its resumer as the loader's does,
 * and every frame's two words are the same. Run as root (BPF); an
 * interpreter that is not installed is skipped, said.
 *
 *   test_luabpf CHAIN_LUA
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
#include "interp/lua/luawalk.h"
#include "luaharness.h"
#include "luawalk.skel.h"

static const char *chain;

/* The BPF side's offsets, from the loader's layout (as the tracer fills them). */
static void proc_of(const struct lua_layout *l, uint64_t main, pid_t pid, struct hs_lua_proc *lp)
{
	memset(lp, 0, sizeof(*lp));
	lp->main = main;
	lp->owner = (uint32_t)pid;
	lp->vm = l->vm == LUA_VM_54 ? HS_LUA_VM_54 : HS_LUA_VM_51;
	lp->l_ci = l->l_ci;
	lp->l_status = l->l_status;
	lp->l_savedpc = l->l_savedpc;
	lp->l_base_ci = l->l_base_ci;
	lp->ci_size = l->ci_size;
	lp->ci_func = l->ci_func;
	lp->ci_previous = l->ci_previous;
	lp->ci_savedpc = l->ci_savedpc;
	lp->ci_callstatus = l->ci_callstatus;
	lp->ci_tailcalls = l->ci_tailcalls;
	lp->cl_isc = l->cl_isc;
	lp->cl_nup = l->cl_nup;
	lp->lcl_p = l->lcl_p;
	lp->ccl_f = l->ccl_f;
	lp->ccl_upvalue = l->ccl_upvalue;
	lp->tv_tt = l->tv_tt;
	lp->tv_tt_size = l->tv_tt_size;
	lp->tag_lua = (uint8_t)l->tag_lua;
	lp->tag_lcf = (uint8_t)l->tag_lcf;
	lp->tag_ccl = (uint8_t)l->tag_ccl;
	lp->tag_thread = (uint8_t)l->tag_thread;
	lp->thread_tt = (uint8_t)(l->tag_thread & 0x3f);
}

static void check_vm(const char *lua, enum lua_vm vm)
{
	struct lua_reader rd = { .l = lua_layout__of(vm), .read = lua_child__read };
	const struct lua_bpf_result *res;
	struct luawalk_bpf *skel;
	struct lua_frame f[HS_LUA_MAX_FRAMES];
	struct hs_lua_proc lp;
	struct lua_child c;
	unsigned int n = 0;
	uint64_t main, g;

	if (lua_child__start(&c, lua, chain)) {
		printf("skip %s: not installed\n", lua);
		return;
	}
	(void)lua_child__traceback(&c, NULL, 0);
	rd.ctx = &c.pid;
	main = lua_child__main(&rd, c.pid, vm, &g);
	assert_true(main != 0);

	skel = luawalk_bpf__open();
	assert_non_null(skel);
	skel->rodata->target_tgid = (uint32_t)c.pid;
	assert_int_equal(luawalk_bpf__load(skel), 0);
	proc_of(rd.l, main, c.pid, &lp);
	res = lua_child__bpf_walk(&c, skel->obj, &lp);
	/*
	 * The loader's walk now: the script is inside io.read() until a whole
	 * line comes (READY was said before it called it: io.stdout:flush()
	 * may still have been running then).
	 */
	assert_true(lua_walk(&rd, main, f, HS_LUA_MAX_FRAMES, &n) > 10);
	lua_bpf_result__check(res, f, n, lua);
	luawalk_bpf__destroy(skel);
	lua_child__stop(&c);
}

static void lua54(void **state)
{
	(void)state;
	check_vm("/usr/bin/lua5.4", LUA_VM_54);
}

static void lua51(void **state)
{
	(void)state;
	check_vm("/usr/bin/lua5.1", LUA_VM_51);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(lua54, lua_child__teardown),
		cmocka_unit_test_teardown(lua51, lua_child__teardown),
	};

	chain = lua_child__chain_arg(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

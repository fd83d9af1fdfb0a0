// SPDX-License-Identifier: MIT
/*
 * test_luafind.c - Lua VMs found in Debian's real files (luafind.c): the
 * VM each one's exports say, lua_newstate and lua_resume, and the
 * interpreter loop both ways: by the symbol of the debug file
 * (liblua5.4-0-dbg, liblua5.1-0-dbg) and, as on a machine without them,
 * by the largest FDE; where both can be had they must agree. A file not
 * installed is skipped, said; so is the symbol's way without its debug
 * file. LuaJIT's own allocator, lj_alloc_f (not exported), found in
 * lua_newstate's code (ljfind.c): the start of an FDE of its own (a
 * function), probed past its first test, on the emulated `je`.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "interp/luajit/ljfind.h"
#include "interp/luajit/ljproto.h"
#include "interp/lua/luafind.h"

static void check(const char *path, enum lua_vm vm)
{
	struct lua_vm_info by_sym, by_fde;

	if (access(path, R_OK)) {
		printf("skip %s: not installed\n", path);
		return;
	}
	/* A root with no debug files: the largest FDE. */
	assert_int_equal(lua_find__file(path, "/nonexistent", &by_fde), 0);
	assert_int_equal(by_fde.vm, vm);
	assert_false(by_fde.exec_by_symbol);
	assert_true(by_fde.newstate != 0);
	assert_true(by_fde.resume_hi > by_fde.resume_lo);
	/* The interpreter loop is big: Debian's are 5.9 to 16 KB. */
	assert_true(by_fde.exec_hi - by_fde.exec_lo > 5000);
	/* Debian's builds have their code at the same file offsets as addresses. */
	assert_int_equal(by_fde.exec_off_hi - by_fde.exec_off_lo, by_fde.exec_hi - by_fde.exec_lo);
	assert_true(by_fde.resume_off_lo != 0);
	printf("%s: interpreter loop [%#llx, %#llx) by the largest FDE\n", path,
	       (unsigned long long)by_fde.exec_lo, (unsigned long long)by_fde.exec_hi);
	assert_int_equal(lua_find__file(path, "", &by_sym), 0);
	if (!by_sym.exec_by_symbol) {
		printf("skip %s: no debug file installed (its symbol's way)\n", path);
		return;
	}
	printf("%s: luaV_execute [%#llx, %#llx) by its symbol\n", path,
	       (unsigned long long)by_sym.exec_lo, (unsigned long long)by_sym.exec_hi);
	assert_int_equal(by_sym.exec_lo, by_fde.exec_lo);
	assert_int_equal(by_sym.exec_hi, by_fde.exec_hi);
}

static void debian_files(void **state)
{
	(void)state;
	check("/usr/bin/lua5.4", LUA_VM_54);
	check("/usr/bin/lua5.1", LUA_VM_51);
	check("/usr/bin/luajit", LUA_VM_JIT);
	check("/usr/lib/x86_64-linux-gnu/liblua5.4.so.0", LUA_VM_54);
	check("/usr/lib/x86_64-linux-gnu/liblua5.1.so.0", LUA_VM_51);
	check("/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2", LUA_VM_JIT);
}

/* lj_alloc_f in a LuaJIT file: outside the VM, in the file's code, its probe on an emulated insn. */
static void check_allocf(const char *path)
{
	struct lua_vm_info vm;
	struct lj_allocf af;

	if (access(path, R_OK)) {
		printf("skip %s: not installed\n", path);
		return;
	}
	assert_int_equal(lua_find__file(path, "", &vm), 0);
	assert_int_equal(lj_find__allocf(path, &af), 0);
	printf("%s: lj_alloc_f at %#llx, probed at +%u (%s)\n", path,
	       (unsigned long long)af.addr, af.ps.offset, af.ps.insn);
	assert_true(af.addr < vm.exec_lo || af.addr >= vm.exec_hi);
	/* Debian's: test %rcx,%rcx (nsize) then je: the je is the site, emulated. */
	assert_int_equal(af.ps.offset, 3);
	assert_true(af.ps.emulated);
	assert_int_equal(af.site - af.ps.offset, af.addr);	/* file offset == address */
	/* The GG_State lua_newstate allocates: Debian 12's 2.1 (GC64), a known layout. */
	assert_non_null(lj_layout__find(af.gg_size));
	assert_int_equal(lj_layout__find(af.gg_size)->gg_g, 96);
	printf("%s: its GG_State %u bytes: %s\n", path, af.gg_size,
	       lj_layout__find(af.gg_size)->build);
}

static void luajit_allocf(void **state)
{
	struct lj_allocf af;

	(void)state;
	check_allocf("/usr/bin/luajit");
	check_allocf("/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2");
	/* PUC Lua has no such shape. */
	if (!access("/usr/bin/lua5.4", R_OK))
		assert_int_equal(lj_find__allocf("/usr/bin/lua5.4", &af), -ENOENT);
}

/* The builds known on this architecture, by their GG_State's size (ljlayout.c). */
static void luajit_layouts(void **state)
{
	char sizes[64];

	(void)state;
#if defined(__aarch64__)
	assert_int_equal(lj_layout__find(6216)->gg_g, 96);
	assert_int_equal(lj_layout__find(6280)->gg_g, 112);
	assert_null(lj_layout__find(6240));	/* x86-64's */
#else
	assert_int_equal(lj_layout__find(6240)->gg_g, 96);
	assert_int_equal(lj_layout__find(6304)->gg_g, 112);
	assert_null(lj_layout__find(6216));	/* arm64's */
#endif
	assert_null(lj_layout__find(0));
	lj_layout__sizes(sizes, sizeof(sizes));
	assert_non_null(strstr(sizes, " or "));
	/* Too small a buffer: cut, still a string. */
	lj_layout__sizes(sizes, 6);
	assert_int_equal(strlen(sizes), 5);
}

static void not_lua(void **state)
{
	struct lua_vm_info info;

	(void)state;
	assert_int_equal(lua_find__file("/bin/true", "", &info), -ENOENT);
	assert_int_equal(lua_find__file("/nonexistent", "", &info), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debian_files),
		cmocka_unit_test(luajit_allocf),
		cmocka_unit_test(luajit_layouts),
		cmocka_unit_test(not_lua),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

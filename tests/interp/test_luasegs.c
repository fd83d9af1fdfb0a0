// SPDX-License-Identifier: MIT
/*
 * test_luasegs.c - a Lua walk's frames cut into the interpreter loop's
 * runs (user/interp/lua/luasegs.c), on the shapes of chain.lua's
 * deepest call in 5.4 and 5.1 (the research's native stacks: 5 runs, 4
 * in the coroutine), a coroutine resumed after a yield (one luaV_execute
 * for its innermost run: its outer runs one segment), a coroutine running
 * a C function (its frames go to its resumer's segment), a thread's C
 * frames below its last run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "heapsnoop/luaframe.h"
#include "interp/lua/luasegs.h"

#define C(fl)	{ 0x1000, HS_LUA_POS(0, HS_LUA_C, (fl)) }
#define L(fl)	{ 0x2000, HS_LUA_POS(0x3000, HS_LUA_LUA, (fl)) }
#define FR	HS_LUA_F_FRESH
#define TH	HS_LUA_F_THREAD

/* chain.lua's frames at io.read, 5.4: which runs FRESH ends. */
static const struct lua_frame chain54[] = {
	C(0),		/* io.read */
	L(0),		/* leaf, called by OP_CALL */
	L(FR),		/* __index, by a metamethod */
	L(FR),		/* cb, by string.gsub */
	C(0),		/* string.gsub */
	L(FR),		/* chainmod.via_gsub, by pcall */
	C(0),		/* pcall */
	L(0),		/* Runner:go */
	L(0),		/* step */
	L(FR),		/* the coroutine's body: its first resume */
	C(TH),		/* coroutine.resume, in the main thread */
	L(0),		/* top */
	L(FR),		/* main chunk, by lua_pcall */
	C(0),		/* pmain */
};

static void check(const struct lua_segs_in *in, const uint32_t *want, uint32_t n)
{
	uint32_t got[16], k = lua_segs(in, got, 16);

	assert_int_equal(k, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

static void fresh_54(void **state)
{
	const uint32_t want[] = { 3, 4, 6, 10, 14 };
	const uint32_t evals[] = { 4, 1 };

	(void)state;
	check(&(struct lua_segs_in){ .f = chain54, .nf = 14 }, want, 5);
	/* The native stack's counts agree: the same. */
	check(&(struct lua_segs_in){ .f = chain54, .nf = 14, .evals = evals, .nthreads = 2 },
	      want, 5);
}

/* 5.1: the caller's instruction says; chain.lua's __index is called by OP_GETTABLE. */
static bool calls51(void *ctx, const struct lua_frame *caller)
{
	const struct lua_frame *f = ctx;

	return caller != &f[3];	/* cb's GETTABLE calls __index */
}

static void calling_instruction_51(void **state)
{
	struct lua_frame f[14];
	const uint32_t want[] = { 3, 4, 6, 10, 14 };

	(void)state;
	for (int i = 0; i < 14; i++)
		f[i] = (struct lua_frame){ chain54[i].code, chain54[i].pos & ~HS_LUA_F_FRESH };
	check(&(struct lua_segs_in){ .f = f, .nf = 14, .v51 = true, .calls = calls51, .ctx = f },
	      want, 5);
}

static void resumed_after_yield(void **state)
{
	/* lua_resume's unroll runs the innermost run in one luaV_execute. */
	const uint32_t evals[] = { 1, 1 }, want[] = { 10, 14 };

	(void)state;
	check(&(struct lua_segs_in){ .f = chain54, .nf = 14, .evals = evals, .nthreads = 2 },
	      want, 2);
}

static void coroutine_of_a_c_function(void **state)
{
	/* coroutine.wrap(string.rep)'s thread runs no Lua: its frame joins the resumer's. */
	const struct lua_frame f[] = { C(0), C(TH), L(0), L(FR), C(0) };
	const uint32_t want[] = { 5 };

	(void)state;
	check(&(struct lua_segs_in){ .f = f, .nf = 5 }, want, 1);
}

static void only_c(void **state)
{
	const struct lua_frame f[] = { C(0), C(0) };
	uint32_t got[4];

	(void)state;
	/* No run: no segment (the splice leaves the native frames alone). */
	assert_int_equal(lua_segs(&(struct lua_segs_in){ .f = f, .nf = 2 }, got, 4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fresh_54),
		cmocka_unit_test(calling_instruction_51),
		cmocka_unit_test(resumed_after_yield),
		cmocka_unit_test(coroutine_of_a_c_function),
		cmocka_unit_test(only_c),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

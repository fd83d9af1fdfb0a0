// SPDX-License-Identifier: MIT
/*
 * lualayout.c - the layouts of lualayout.h, one per VM (sources there).
 * A tag in a value is the type's variant with the collectable bit (5.4:
 * ctb(), 0x40); 5.1 keeps the plain type number in an int.
 */
#include <stddef.h>

#include "interp/lua/lualayout.h"

static const struct lua_layout lua54 = {
	.vm = LUA_VM_54,
	.name = "Lua 5.4",
	.l_size = 200, .l_tt = 8, .l_status = 10, .l_g = 24, .l_ci = 32, .l_stack = 48,
	.l_base_ci = 96,
	.ci_size = 64, .ci_func = 0, .ci_previous = 16, .ci_savedpc = 32, .ci_callstatus = 62,
	.tv_size = 16, .tv_tt = 8, .tv_tt_size = 1,
	.tag_lua = 0x46, .tag_lcf = 0x16, .tag_ccl = 0x66, .tag_thread = 0x48,
	.tag_shrstr = 0x44, .tag_lngstr = 0x54, .tag_table = 0x45, .tag_proto = 0x0a,
	.cl_nup = 10, .lcl_p = 24, .ccl_f = 24, .ccl_upvalue = 32,
	.p_size = 128, .p_sizeupvalues = 16, .p_sizek = 20, .p_sizecode = 24,
	.p_sizelineinfo = 28, .p_sizep = 32, .p_sizelocvars = 36, .p_sizeabslineinfo = 40,
	.p_linedefined = 44, .p_lastlinedefined = 48,
	.p_k = 56, .p_code = 64, .p_p = 72, .p_upvalues = 80, .p_lineinfo = 88,
	.p_abslineinfo = 96, .p_locvars = 104, .p_source = 112,
	.upvaldesc_size = 16,
	.s_shrlen = 11, .s_len = 16, .s_data = 24,
	.t_lsizenode = 11, .t_node = 24, .node_size = 24, .node_val_tt = 8, .node_key_tt = 9,
	.node_key = 16,
	.g_frealloc = 0, .g_registry = 64, .g_mainthread = 264,
	.l_to_g = 200,
};

static const struct lua_layout lua51 = {
	.vm = LUA_VM_51,
	.name = "Lua 5.1",
	.l_size = 184, .l_tt = 8, .l_status = 10, .l_g = 32, .l_ci = 40, .l_stack = 64,
	.l_base_ci = 80, .l_savedpc = 48,
	.ci_size = 40, .ci_func = 8, .ci_savedpc = 24, .ci_tailcalls = 36,
	.tv_size = 16, .tv_tt = 8, .tv_tt_size = 4,
	/* every function is a closure (tag 6), isC says which */
	.tag_lua = 6, .tag_thread = 8, .tag_shrstr = 4, .tag_lngstr = 4, .tag_table = 5,
	.tag_proto = 9,
	.cl_isc = 10, .cl_nup = 11, .lcl_p = 32, .ccl_f = 32, .ccl_upvalue = 40,
	.p_size = 120, .p_k = 16, .p_code = 24, .p_p = 32, .p_lineinfo = 40, .p_locvars = 48,
	.p_upvalues = 56, .p_source = 64, .p_sizeupvalues = 72, .p_sizek = 76, .p_sizecode = 80,
	.p_sizelineinfo = 84, .p_sizep = 88, .p_sizelocvars = 92, .p_linedefined = 96,
	.p_lastlinedefined = 100, .p_nups = 112,
	.upvaldesc_size = 8,
	.s_len = 16, .s_data = 24,
	.t_lsizenode = 11, .t_node = 32, .node_size = 40, .node_val_tt = 8, .node_key_tt = 24,
	.node_key = 16,
	.g_frealloc = 16, .g_registry = 160, .g_mainthread = 176,
	.l_to_g = 184,
};

const struct lua_layout *lua_layout__of(enum lua_vm vm)
{
	switch (vm) {
	case LUA_VM_54:
		return &lua54;
	case LUA_VM_51:
		return &lua51;
	default:
		return NULL;
	}
}

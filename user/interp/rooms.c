// SPDX-License-Identifier: MIT
/*
 * rooms.c - the table of runtimes (ops.h): a row per room, in the order
 * they look at a process. Lua's look comes first: it also probes
 * LuaJIT's own allocator when the Lua walker is off (--interp python),
 * and a process may embed both; then CPython's. A new runtime: its room
 * (user/interp/NAME/, built by the Makefile's wildcard), its row here.
 * And what every row is asked alike before a process exists: the
 * command's environment.
 */
#include <stddef.h>

#include "interp/ops.h"

/* Each room's row: lua/luainterp.c, luajit/ljinterp.c, python/pyops.c. */
extern const struct interp_ops interp_lua_ops, interp_luajit_ops, interp_python_ops;

const struct interp_ops *const interp_rooms[] = {
	&interp_lua_ops,
	&interp_luajit_ops,
	&interp_python_ops,
	NULL,
};

int interp__command_env(const struct interp_opts *o, const char *cmd)
{
	int err;

	for (const struct interp_ops *const *r = interp_rooms; *r; r++)
		if ((*r)->command_env && (err = (*r)->command_env(o, cmd)))
			return err;
	return 0;
}

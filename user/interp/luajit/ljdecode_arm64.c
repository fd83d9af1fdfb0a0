// SPDX-License-Identifier: MIT
/*
 * ljdecode_arm64.c - ljdecode.h on arm64: not written yet (no arm64
 * LuaJIT was at hand to learn its shape from), so a LuaJIT there is said
 * to have its allocator not probed (user/interp/luajit/ljfind.c).
 */
#include <errno.h>

#include "interp/luajit/ljdecode.h"

int ljdecode__allocf(const uint8_t *code, size_t len, uint64_t addr, uint64_t *allocf,
		     uint32_t *gg_size)
{
	(void)code; (void)len; (void)addr; (void)allocf; (void)gg_size;
	return -ENOTSUP;
}

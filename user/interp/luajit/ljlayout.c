// SPDX-License-Identifier: MIT
/*
 * ljlayout.c - the LuaJIT builds whose layout is known (see ljproto.h),
 * by the size of the GG_State their lua_newstate allocates, on the
 * architecture this is built for. The numbers are offsetof() and sizeof()
 * over each build's headers (lj_obj.h, lj_jit.h, lj_dispatch.h), compiled
 * by GCC for that architecture; the sizes were also read from the
 * binaries' lua_newstate where named in ljproto.h.
 */
#include <stdio.h>

#include "interp/luajit/ljproto.h"

static const struct lj_layout layouts[] = {
#if defined(__aarch64__)
	{ .gg_size = 6216, .gg_g = 96, .build = "Debian 12's 2.1.0~beta3" },
	{ .gg_size = 6280, .gg_g = 112, .build = "Debian 13's OpenResty 2.1" },
#else
	{ .gg_size = 6240, .gg_g = 96, .build = "Debian 12's 2.1.0~beta3" },
	{ .gg_size = 6304, .gg_g = 112, .build = "Debian 13's OpenResty 2.1" },
#endif
};

#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

const struct lj_layout *lj_layout__find(uint32_t gg_size)
{
	for (size_t i = 0; i < NLAYOUTS; i++)
		if (layouts[i].gg_size == gg_size)
			return &layouts[i];
	return NULL;
}

void lj_layout__sizes(char *buf, size_t len)
{
	size_t at = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < NLAYOUTS && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%u", i ? " or " : "", layouts[i].gg_size);

		if (n < 0)
			return;
		at += (size_t)n;
	}
}

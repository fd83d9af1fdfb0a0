// SPDX-License-Identifier: MIT
/*
 * crooms.c - the collector's table of runtimes (cops.h): a row per room
 * whose frames it walks in the process. A new runtime's collector walk:
 * its file in its room (in the Makefile's PRELOAD_SRC), its row here.
 */
#include <stddef.h>

#include "interp/cops.h"

/* Each room's row: python/pywalk.c, lua/luaframes.c. */
extern const struct interp_cops pywalk_cops, luaframes_cops;

const struct interp_cops *const interp_crooms[] = {
	&pywalk_cops,
	&luaframes_cops,
	NULL,
};

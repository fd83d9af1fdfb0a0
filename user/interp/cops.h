/* SPDX-License-Identifier: MIT */
/*
 * cops.h - the collector's side of the table of runtimes (ops.h is the
 * tracer's and --preload reader's): a row per room whose frames the
 * in-process collector walks (python/pywalk.c, lua/luaframes.c), the
 * rows in crooms.c. setup.c turns a room's walk on when heapsnoop asks
 * for its runtime (HEAPSNOOP_INTERP names it) and off when no heapsnoop
 * holds the table; the walk itself is called on each allocation's path
 * directly (user/collector/preload.c's intern(): one test of its flag,
 * no call through a pointer there).
 */
#ifndef HEAPSNOOP_INTERP_COPS_H
#define HEAPSNOOP_INTERP_COPS_H

#include <stdbool.h>

struct interp_cops {
	const char *name;	/* as HEAPSNOOP_INTERP names it: "python", "lua" */
	/* Its walk set up and turned on: 0 or a negative errno (then off). */
	int (*init)(void);
	bool *on;		/* the walk's flag, read on each allocation */
};

/* crooms.c: the rows; NULL-terminated. */
extern const struct interp_cops *const interp_crooms[];

#endif /* HEAPSNOOP_INTERP_COPS_H */

/* SPDX-License-Identifier: MIT */
/*
 * modmaps.h - the executable segments of every object the dynamic loader
 * has loaded into this process, as `map` records describe them
 * (docs/OUTPUT.md): start and offset rounded down to the page as
 * /proc/PID/maps shows them, the build ID from the object's PT_NOTE in
 * memory, the main program's file by its mapping. libhsam's
 * hs_am_maps_self() writes them; the preload keeps them in its live
 * table (ltstacks.c).
 */
#ifndef HEAPSNOOP_COLLECTOR_MODMAPS_H
#define HEAPSNOOP_COLLECTOR_MODMAPS_H

#include <stdint.h>

#include "text.h"

struct modmap_seg {
	uint64_t start, end, off;
	const char *path;		/* "[vdso]" for the vDSO */
	char build_id[BUILD_ID_HEX_SIZE];	/* hex, or "-" */
};

/*
 * Each executable segment in the loader's order to @fn(@arg, seg), until
 * @fn returns non-zero (returned). Opens /proc/self/maps once for the
 * main program's path (it allocates: not for a signal handler).
 */
int modmaps__each(int (*fn)(void *arg, const struct modmap_seg *seg), void *arg);

#endif /* HEAPSNOOP_COLLECTOR_MODMAPS_H */

/* SPDX-License-Identifier: MIT */
/*
 * modmaps.h - the `map` records of the running process, from the dynamic
 * loader's own list (dl_iterate_phdr): every executable PT_LOAD segment of
 * every loaded object, with the build ID read from its PT_NOTE in memory.
 * No file is opened and nothing is allocated (callable inside malloc).
 */
#ifndef HEAPSNOOP_COLLECTOR_MODMAPS_H
#define HEAPSNOOP_COLLECTOR_MODMAPS_H

#include <stdio.h>

/*
 * Write one `map` line (docs/OUTPUT.md) per executable segment of each
 * loaded object to @out, for process @pid; the main program's path is
 * /proc/self/exe's target, the vDSO's "[vdso]". An hs_am_maps_fn (@arg is
 * unused). Returns 0 or -EIO.
 */
int modmaps__write(FILE *out, int pid, void *arg);

#endif /* HEAPSNOOP_COLLECTOR_MODMAPS_H */

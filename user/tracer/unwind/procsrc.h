/* SPDX-License-Identifier: MIT */
/*
 * procsrc.h - where the tracer's unwinder finds a module's file: through
 * /proc, the very file the live process maps (maps/procmaps.h's
 * proc_maps__reach: map_files, the process's root, the path, each checked
 * by its device and inode). No separate debug file is read online: a
 * `.debug_frame` that lives only there is heapdecode's to use, offline
 * (docs/DESIGN.md, "Unwinding later, elsewhere").
 */
#ifndef HEAPSNOOP_PROCSRC_H
#define HEAPSNOOP_PROCSRC_H

#include "unwind/cfi.h"

/* The source every unwinder of the tracer is made with (unwinder__new()). */
extern const struct cfi_src proc_cfi_src;

#endif /* HEAPSNOOP_PROCSRC_H */

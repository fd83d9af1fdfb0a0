/* SPDX-License-Identifier: MIT */
/*
 * preload.h - `heapsnoop --preload -- CMD`: no BPF, the command runs with
 * the in-process collector (libheapsnoop_preload.so, docs/COLLECTOR.md)
 * preloaded and configured from the options.
 */
#ifndef HEAPSNOOP_PRELOAD_H
#define HEAPSNOOP_PRELOAD_H

#include "options.h"

/*
 * Set LD_PRELOAD (the library next to this program's binary, or
 * $HEAPSNOOP_PRELOAD_LIB) and the collector's variables from @o (-o as an
 * absolute path, -i, --unwind fp, --sample-bytes, --seed; SIGUSR1 for a
 * dump), then exec the command. Returns only on failure: 127 after saying
 * why (msg.h).
 */
int preload__exec(const struct options *o);

#endif /* HEAPSNOOP_PRELOAD_H */

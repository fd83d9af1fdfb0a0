/* SPDX-License-Identifier: MIT */
/*
 * preload.h - `heapsnoop --preload -- CMD`: no BPF; the command runs with
 * the in-process collector (libheapsnoop_preload.so, docs/COLLECTOR.md)
 * preloaded, and heapsnoop stays beside it as the collector's
 * supervisor: every process image the command makes hands heapsnoop its
 * live table, and heapsnoop writes the dumps, however each process ends
 * (exit, _exit, a signal, kill -9).
 */
#ifndef HEAPSNOOP_PRELOAD_H
#define HEAPSNOOP_PRELOAD_H

#include "options.h"

/*
 * Run @o's command under the collector configured from @o (-o, -i,
 * --unwind fp, --sample-bytes, --seed, -v) until it and every process it
 * made have ended; SIGUSR1 to heapsnoop dumps every running process.
 * Returns the exit status: the command's (128 + N for a signal N); 3 if
 * anything was not recorded (said); 1 on an error; 127 if the command
 * could not run.
 */
int preload__run(const struct options *o);

#endif /* HEAPSNOOP_PRELOAD_H */

/* SPDX-License-Identifier: MIT */
/*
 * stackview.h - a stack as the human reports show it (heapsnoop -s,
 * heapdecode --report and --growth; issue 32): each frame as framefmt.h
 * writes it (the symbolizer hides symbol versions: malloc@@GLIBC_2.2.5
 * reads malloc unless heapdecode --symbol-versions), a run of frames without a symbol in one module one line
 * ("#3  [4 frames without a symbol in libfoo.so]"), and, unless the
 * whole stack is asked for (--full-stacks), nothing below main or below
 * a thread's function: the C runtime's start (__libc_start_call_main,
 * __libc_start_main, _start; start_thread, clone3) is on every stack and
 * says nothing. The machine formats (records, --folded, --pprof, --json)
 * keep every frame as it is.
 */
#ifndef HEAPSNOOP_STACKVIEW_H
#define HEAPSNOOP_STACKVIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "holders.h"

/*
 * Write @depth frames @frames of process @pid (innermost first), named
 * through @fn(@ctx, ...), each line after @indent; with @full every
 * frame, none cut.
 */
void stackview__write(FILE *out, const char *indent, uint32_t pid, const uint64_t *frames,
		      uint32_t depth, bool full, holders_lookup_fn fn, void *ctx);

#endif /* HEAPSNOOP_STACKVIEW_H */

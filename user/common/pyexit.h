/* SPDX-License-Identifier: MIT */
/*
 * pyexit.h - a Python that freed its heap at exit, said: CPython frees
 * its objects at shutdown (Py_FinalizeEx), so a launched script's live
 * set at the end is a sliver of what it held, and what it held shows
 * only in the whole-run counts (heapdecode --stats --sort peak). The -s
 * summary (user/tracer/output/rtsummary.c) and heapdecode --report
 * (user/decode/analyses/runtime.c) say so in the same line.
 */
#ifndef HEAPSNOOP_PYEXIT_H
#define HEAPSNOOP_PYEXIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Peaks below this many bytes are not worth a word. */
#define PYEXIT_MIN_PEAK		(1u << 20)
/* "Freed its heap": at most 1/PYEXIT_RATIO of the peak live at the end. */
#define PYEXIT_RATIO		10

/*
 * Did process @comm (a Python interpreter: its name begins with
 * "python"), which peaked at @peak bytes, end with @live bytes live,
 * at most a tenth of a peak of a MiB or more?
 */
bool pyexit__freed(const char *comm, uint64_t peak, uint64_t live);

/*
 * The line that says it, into @buf of @len bytes (returned): process
 * @pid (@comm) peaked at @peak bytes in @peak_count allocations @ago_ms
 * before the end (negative: unknown), @live bytes live at the end; the
 * log to give heapdecode is @log (NULL: "LOG"). @read_ms > 0: the peak is
 * the most heapsnoop --preload read live, every @read_ms milliseconds
 * (its log has no whole-run records: "at least", and -i's dumps to see
 * it); 0: the tracer's, counted at every allocation.
 */
const char *pyexit__text(char *buf, size_t len, int pid, const char *comm, uint64_t peak,
			 uint64_t peak_count, int64_t ago_ms, uint64_t live, const char *log,
			 unsigned int read_ms);

#endif /* HEAPSNOOP_PYEXIT_H */

/* SPDX-License-Identifier: MIT */
/*
 * pywalk.h - a CPython's frames read by the collector at each allocation
 * it records (heapsnoop --preload, --interp python): the calling
 * thread's chain of interpreter frames appended to its native stack as
 * the live table's Python words (include/heapsnoop/livetable.h, LT_PY_*),
 * which heapsnoop names by reading the process and splices at the eval
 * loop's frames (user/interp/python/plpython.c), as the BPF tracer's
 * walk (user/interp/python/python.bpf.h) and splice (user/interp/splice.c) do.
 * docs/COLLECTOR.md, "Python frames".
 */
#ifndef HEAPSNOOP_COLLECTOR_PYWALK_H
#define HEAPSNOOP_COLLECTOR_PYWALK_H

#include <stdbool.h>
#include <stdint.h>

/* Set by pywalk__init(): the walk is on (read by the allocation's path). */
extern bool pywalk_on;

/*
 * Find this process's CPython (its exported Py_Version, _PyRuntime,
 * _PyEval_EvalFrameDefault, PyGILState_GetThisThreadState, PyCode_Type;
 * 3.11 to 3.14, the layout user/interp/python/pylayout.c's table's or,
 * from 3.13, its own _Py_DebugOffsets', checked against PyCode_Type's
 * size) and say it in the table's header (py_version, py_eval) before
 * any stack holds its frames. Returns 0 (the walk is on); -ENOENT: no
 * CPython here; -ENOTSUP: a version or build the walk does not read
 * (said on standard error: what is missing, what to do).
 */
int pywalk__init(void);

/*
 * The stack @frames[@depth] (native, call site first; REC_CUT_* @cut)
 * with the calling thread's Python frames after it, interned
 * (ltstacks__intern()): its id, 0 if it could not be kept. A thread with
 * no Python frames interns its native stack alone. No lock, no
 * allocation, no system call: the thread's own frames are read in place.
 */
uint32_t pywalk__intern(const uint64_t *frames, uint32_t depth, uint32_t cut);

#endif /* HEAPSNOOP_COLLECTOR_PYWALK_H */

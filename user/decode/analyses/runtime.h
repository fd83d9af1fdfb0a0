/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - what heapdecode --report says apart from the program's
 * own: the C runtime's allocations (suppress__runtime(): stdio buffers,
 * TLS, the dynamic loader's...), taken out of the stacks and said in a
 * line after them, unless --no-default-suppressions; and a Python that
 * freed its heap at exit (pyexit.h), with where its peak is seen.
 */
#ifndef HEAPDECODE_RUNTIME_H
#define HEAPDECODE_RUNTIME_H

#include <stdio.h>

#include "model/model.h"
#include "suppress.h"

/*
 * Keep at the front of @v (@n live stacks of @m) the program's own, in
 * their order, and return how many; the C runtime's own are tallied
 * into @t (zeroed first). With a baseline (differences), all are kept.
 */
size_t hd_runtime__split(struct hd_model *m, struct stack **v, size_t n,
			 struct suppress_tally *t);

/* @t's line after the report, if it holds any allocation. */
void hd_runtime__write(const struct suppress_tally *t, FILE *out);

/*
 * A line for each Python process of @m that freed its heap at exit
 * (pyexit.h), naming @input as the log to see its peak in.
 */
void hd_runtime__python(struct hd_model *m, const char *input, FILE *out);

#endif /* HEAPDECODE_RUNTIME_H */

/* SPDX-License-Identifier: MIT */
/* nofp.h - the interface between prog_nofp and its libraries. */
#ifndef NOFP_H
#define NOFP_H

#include <stddef.h>

typedef void *(*nofp_cb)(size_t n, int depth);

/* libnofp.so: -O2 -fomit-frame-pointer, with CFI. */
void *lib_enter(nofp_cb cb, size_t n, int depth);
void *lib_leaf(size_t n, int depth);

/* libfp.so: frame pointers, no CFI at all (unwound by %rbp). */
void *fp_hop(nofp_cb cb, size_t n, int depth);

/* libnofp_late.so, dlopen'ed by the program after it has started. */
void *late_enter(nofp_cb cb, size_t n);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * pyproc.h - what CPython's room keeps of a traced process (struct
 * py_proc, the core's iproc->py) and what its files share: its look
 * (pylook.c) and its row of the table (pyops.c: fork, splice, forget,
 * counts; ops.h).
 */
#ifndef HEAPSNOOP_PYPROC_H
#define HEAPSNOOP_PYPROC_H

#include <stdbool.h>
#include <stdint.h>

#include "interp/interp_int.h"
#include "interp/python/pycache.h"
#include "interp/python/pyfind.h"

/* A process's CPython, from its look until its image is forgotten. */
struct py_proc {
	struct py_image img;	/* link-time addresses */
	uint64_t bias;		/* ... + bias: the process's */
	struct py_cache *cache;
};

/* pyops.c: CPython's row. */
extern const struct interp_ops interp_python_ops;

/* @p's CPython (its room slot's, when this row made it), or NULL. */
static inline struct py_proc *py_of(const struct iproc *p)
{
	return interp__room(p, &interp_python_ops);
}

/* pylook.c: the row's look (ops.h). */
bool interp__look_python(struct interp *ip, struct iproc *p, const struct mapset *pm,
			 enum interp_when when);

#endif /* HEAPSNOOP_PYPROC_H */

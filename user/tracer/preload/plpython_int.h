/* SPDX-License-Identifier: MIT */
/*
 * plpython_int.h - what plpython.c (stacks named and spliced, the images)
 * and plpycode.c (code objects: the collector's records, or read from the
 * process) share.
 */
#ifndef HEAPSNOOP_PLPYTHON_INT_H
#define HEAPSNOOP_PLPYTHON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livetable.h"
#include "interp/pycode.h"
#include "interp/pyfind.h"

/* A code object as a frame names it: (address, fingerprint). */
struct code {
	uint64_t addr;
	uint32_t fp;
	bool ok;		/* recorded or read, and checked; else "<code gone>" */
	struct py_code c;
};

struct plpy_image {
	struct plpy *py;
	struct plpy_image *next;
	pid_t pid;
	int pidfd;
	bool dead, scan_bad;
	bool named;		/* its binary read: its frames named; else left out, cut=order */
	const struct lt_header *h;
	struct py_image img;
	uint64_t bias, code_type;
	const char *stk;	/* the stacks' region, mapped read-only */
	uint64_t stk_cap, scanned;
	struct htab *codes;	/* (address, fingerprint) -> struct code */
	struct htab *stacks;	/* stack id -> struct xstack */
	uint64_t gone;
};

struct plpy {
	bool verbose;
	struct frametab *ft;
	struct plpy_image *images;
	uint64_t images_n, stacks, frames, gone, order, reads, records;
	uint64_t iframes[LT_MAX_DEPTH], out[LT_MAX_DEPTH], f[LT_MAX_DEPTH];
	uint32_t seg_end[LT_MAX_DEPTH + 1];
};

/* pi->codes' equality: a stored struct code against a struct code_key. */
struct code_key {
	uint64_t addr;
	uint32_t fp;
};
bool plpy_code__equal(uintptr_t stored, uintptr_t probe, void *ctx);

/*
 * The code object @addr of fingerprint @fp: its record's, else read from
 * the process while it runs, once (NULL: no memory; ->ok false: gone).
 */
struct code *plpy_code__of(struct plpy_image *pi, uint64_t addr, uint32_t fp);

/* A code object's record (LT_PY_CODEREC) @w[@n], copied out, kept. */
void plpy_code__record(struct plpy_image *pi, const uint64_t *w, uint32_t n);

/* Every code object of @pi freed. */
void plpy_code__free_all(struct plpy_image *pi);

#endif /* HEAPSNOOP_PLPYTHON_INT_H */

/* SPDX-License-Identifier: MIT */
/*
 * plpython_int.h - what CPython's side of --preload's reader shares
 * (plpython.c: its state of an image, naming and splice; plpycode.c: code
 * objects, the collector's records or read from the process), and its
 * row's pl_* (pyops.c). The images: interp/plread_int.h.
 */
#ifndef HEAPSNOOP_PLPYTHON_INT_H
#define HEAPSNOOP_PLPYTHON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livetable.h"
#include "interp/ops.h"
#include "interp/plread_int.h"
#include "interp/python/pycode.h"
#include "interp/python/pyfind.h"

/* A code object as a frame names it: (address, fingerprint). */
struct code {
	uint64_t addr;
	uint32_t fp;
	bool ok;		/* recorded or read, and checked; else "<code gone>" */
	struct py_code c;
};

/* CPython's state of an image (its slot: plpy__new_state()). */
struct plpy_py {
	uint32_t version;	/* its collector's py_version */
	struct py_image img;
	uint64_t bias, code_type;
	struct htab *codes;	/* (address, fingerprint) -> struct code */
	struct htab *named_frames;	/* (address, fingerprint, index) -> a frame as named */
};

static inline struct plpy_py *plpy_py_of(const struct plread_image *pi)
{
	return pi->room;
}

/* plpy_py's codes' equality: a stored struct code against a struct code_key. */
struct code_key {
	uint64_t addr;
	uint32_t fp;
};
bool plpy_code__equal(uintptr_t stored, uintptr_t probe, void *ctx);

/*
 * The code object @addr of fingerprint @fp: its record's, else read from
 * the process while it runs, once (NULL: no memory; ->ok false: gone).
 */
struct code *plpy_code__of(struct plread_image *pi, uint64_t addr, uint32_t fp);

/* A code object's record (LT_PY_CODEREC) @w[@n], copied out, kept. */
void plpy_code__record(struct plread_image *pi, const uint64_t *w, uint32_t n);

/* Every code object of @pi freed. */
void plpy_code__free_all(struct plread_image *pi);

/*
 * CPython's --preload reading (its row's pl_*, interp/ops.h): an image of
 * its collector's (@py_version set); its state made, freed; its eval
 * loop's address; its binary read (plpython.c); a fork child's its
 * parent's; a code object's record; a stack named and spliced; -v's line
 * once its binary is read; the closing lines.
 */
bool plpy__is(uint32_t py_version, uint32_t lua_vm);
int plpy__new_state(struct plread_image *pi);
void plpy__free_state(struct plread_image *pi);
uint64_t plpy__anchor(const struct lt_header *h);
int plpy__read(struct plread_image *pi, const char *path, uint64_t start, uint64_t off,
	       uint64_t eval, char *why, size_t cap);
int plpy__copy(struct plread_image *pi, const struct plread_image *parent);
bool plpy__record(struct plread_image *pi, const uint64_t *w, uint32_t n);
struct xstack *plpy__resolve(struct plread_image *pi, uint32_t id, const uint64_t *f,
			     uint32_t depth, uint32_t cut);
void plpy__said(const struct plread_image *pi);
void plpy__counts_said(const struct pl_counts *c, bool verbose);

#endif /* HEAPSNOOP_PLPYTHON_INT_H */

/* SPDX-License-Identifier: MIT */
/*
 * plpython_int.h - what plpython.c (stacks named and spliced, the images)
 * and plpycode.c (code objects: the collector's records, or read from the
 * process) share, and pllua.c (a Lua's images: the same images, stacks
 * and frame table, its own names and splice).
 */
#ifndef HEAPSNOOP_PLPYTHON_INT_H
#define HEAPSNOOP_PLPYTHON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livetable.h"
#include "interp/ops.h"
#include "interp/python/pycode.h"
#include "interp/python/pyfind.h"

/* A code object as a frame names it: (address, fingerprint). */
struct code {
	uint64_t addr;
	uint32_t fp;
	bool ok;		/* recorded or read, and checked; else "<code gone>" */
	struct py_code c;
};

#define AS_IS UINT32_MAX	/* an xstack whose frames are the table's own */

/* A stack as written: its frames named and spliced. */
struct xstack {
	uint32_t depth, cut;	/* depth AS_IS: the table's own frames */
	uint64_t frames[];
};

struct pllua;

struct plpy_image {
	const struct interp_ops *ops;	/* its runtime's row (interp/ops.h): pl_* read it */
	struct pllua *lua;	/* a Lua's image (pllua.c); NULL: a Python's */
	struct plpy *py;
	struct plpy_image *next;
	pid_t pid;
	int pidfd;
	bool dead, scan_bad;
	bool named;		/* its binary read: its frames named; else left out, cut=order */
	bool pending, said;	/* its binary not read while it ran: read again at its end */
	char why[160];		/* why not, while pending */
	const struct lt_view *view;	/* its table (the image's: segments added as they come) */
	uint32_t version;	/* py_version; 0: a Lua */
	const struct lt_header *h;
	struct py_image img;
	uint64_t bias, code_type;
	uint64_t scanned;	/* the stacks' region's offset scanned up to */
	struct htab *codes;	/* (address, fingerprint) -> struct code */
	struct htab *stacks;	/* stack id -> struct xstack */
	struct htab *named_frames;	/* (address, fingerprint, index) -> a frame as named */
	uint64_t gone;
};

struct plpy {
	bool verbose;
	struct frametab *ft;
	struct plpy_image *images;
	uint64_t images_n, stacks, frames, gone, order, reads, records;
	uint64_t lua_images, lua_stacks, lua_records, lua_gone;
	uint64_t unnamed;	/* images whose frames could not be named (each said) */
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

/*
 * A spliced stack's cut bits: @cut's, with splice__frames()'s @sflags,
 * interpreter loop frames with no interpreter frames to place
 * (@unplaced: not in order, the tracer's rule), the walk cut by depth
 * (@more) or unreadable (@bad); counted in py->order when not in order.
 */
uint32_t plpy__splice_cut(struct plpy *py, uint32_t cut, uint32_t sflags, bool unplaced,
			  bool more, bool bad);

/*
 * Stack @id kept in pi->stacks as written: py->out[@n] (@n AS_IS: the
 * table's own frames) with @cut. NULL: no memory.
 */
struct xstack *plpy__keep(struct plpy_image *pi, uint32_t id, uint32_t n, uint32_t cut);

/*
 * plbinary.c: the binary holding the eval loop (or lua_newstate) at @eval
 * in @pi's process read: a fork child's is its parent's (@parent, as its
 * header says); else by the process's mappings, or its table's module
 * records (pi->view) when it has ended. Returns 0 or -errno (*@why says).
 */
int plpy_image__find_binary(struct plpy_image *pi, pid_t parent, uint64_t eval, char *why,
			    size_t cap);

/*
 * pllua.c: @pi's Lua VM read from its binary @path (mapped at @start
 * from file offset @off) into pi->lua (pllua__new()'s): 0 or -errno
 * (*@why says); a fork child's copied from its @parent's.
 */
int pllua__read_binary(struct plpy_image *pi, const char *path, uint64_t start, uint64_t off,
		       char *why, size_t cap);
int pllua__copy(struct plpy_image *pi, const struct plpy_image *parent);
/* pi->lua made, or made empty again (a binary read again): 0 or -ENOMEM. */
int pllua__new(struct plpy_image *pi);
/* A frame's name record (LT_LUA_NAMEREC) @w[@n], copied out, kept. */
void pllua__record(struct plpy_image *pi, const uint64_t *w, uint32_t n);
/* Stack @id (@f[@depth], cut bits @cut) named and spliced, kept in pi->stacks; NULL: no memory. */
struct xstack *pllua__resolve(struct plpy_image *pi, uint32_t id, const uint64_t *f,
			      uint32_t depth, uint32_t cut);
void pllua__free(struct plpy_image *pi);

/*
 * CPython's --preload reading (its row's pl_*, interp/ops.h): an image of
 * its collector's (@py_version set); its eval loop's address; its binary
 * read (plpython.c); a fork child's its parent's; a stack named and
 * spliced; -v's line once its binary is read.
 */
bool plpy__is(uint32_t py_version, uint32_t lua_vm);
uint64_t plpy__anchor(const struct lt_header *h);
int plpy__read(struct plpy_image *pi, const char *path, uint64_t start, uint64_t off,
	       uint64_t eval, char *why, size_t cap);
int plpy__copy(struct plpy_image *pi, const struct plpy_image *parent);
struct xstack *plpy__resolve(struct plpy_image *pi, uint32_t id, const uint64_t *f,
			     uint32_t depth, uint32_t cut);
void plpy__said(const struct plpy_image *pi);

#endif /* HEAPSNOOP_PLPYTHON_INT_H */

/* SPDX-License-Identifier: MIT */
/*
 * plread_int.h - what heapsnoop --preload's reader (plread.c, plbinary.c)
 * and the rooms that read its images share (their rows' pl_*, ops.h:
 * python/plpython.c, lua/pllua.c): an image, each room's state of it in
 * its slot; the reader's scratch and counts; a stack as kept; the
 * splice's cut bits; the binary found.
 */
#ifndef HEAPSNOOP_PLREAD_INT_H
#define HEAPSNOOP_PLREAD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livetable.h"
#include "interp/ops.h"

#define AS_IS UINT32_MAX	/* an xstack whose frames are the table's own */

/* A stack as written: its frames named and spliced. */
struct xstack {
	uint32_t depth, cut;	/* depth AS_IS: the table's own frames */
	uint64_t frames[];
};

/*
 * A runtime's counts over the images its row read (struct plread's, one a
 * row of interp_rooms, up to PL_ROWS).
 */
struct pl_counts {
	uint64_t images, stacks, frames, gone, order, reads, records;
};
#define PL_ROWS 8

/*
 * An image of --preload's reader: a process image whose collector walks
 * an interpreter (its header says which: livetable.h's py_version,
 * lua_vm), its table's stacks named and kept. Which runtime is its row's
 * (@ops), and the room's state of it is in its slot (@room: CPython's
 * struct plpy_py, python/plpython_int.h; lua/pllua.c's struct pllua), made by the row's
 * pl_new and freed by its pl_free: nothing here is one runtime's.
 */
struct plread_image {
	const struct interp_ops *ops;	/* its runtime's row (interp/ops.h): pl_* read it */
	void *room;		/* that room's state of it */
	struct pl_counts *c;	/* its row's counts (py->counts[]) */
	struct plread *py;
	struct plread_image *next;
	pid_t pid;
	int pidfd;
	bool dead, scan_bad;
	bool named;		/* its binary read: its frames named; else left out, cut=order */
	bool pending, said;	/* its binary not read while it ran: read again at its end */
	char why[160];		/* why not, while pending */
	const struct lt_view *view;	/* its table (the image's: segments added as they come) */
	const struct lt_header *h;
	uint64_t scanned;	/* the stacks' region's offset scanned up to */
	struct htab *stacks;	/* stack id -> struct xstack */
	uint64_t gone;		/* its frames named as gone, or "?" */
};

/* The reader: its images, the frames' names, each row's counts, its scratch. */
struct plread {
	bool verbose;
	struct frametab *ft;
	struct plread_image *images;
	struct pl_counts counts[PL_ROWS];	/* a row each, in interp_rooms' order */
	uint64_t unnamed;	/* images whose frames could not be named (each said) */
	uint64_t iframes[LT_MAX_DEPTH], out[LT_MAX_DEPTH], f[LT_MAX_DEPTH];
	uint32_t seg_end[LT_MAX_DEPTH + 1];
};

/*
 * A spliced stack's cut bits: @cut's, with splice__frames()'s @sflags,
 * interpreter loop frames with no interpreter frames to place
 * (@unplaced: not in order, the tracer's rule), the walk cut by depth
 * (@more) or unreadable (@bad); counted in @pi's row's order when not in
 * order.
 */
uint32_t plread__splice_cut(struct plread_image *pi, uint32_t cut, uint32_t sflags,
			    bool unplaced, bool more, bool bad);

/*
 * A stack that is not spliced, as kept: @f's first @nn words native (of
 * @depth), @evals whether an interpreter loop frame is among them. None is
 * and the stack holds no interpreter word (@nn == @depth): the table's own
 * frames (*@n AS_IS); else @pi's frames cannot be named (!pi->named): the
 * @nn native frames into py->out (*@n = @nn), the interpreter's left out,
 * *@cut said not in order. Returns true for either (*@n, *@cut set for
 * plread__keep()), false when the stack is to be spliced (both untouched).
 */
bool plread__unspliced(struct plread_image *pi, const uint64_t *f, uint32_t nn, uint32_t depth,
		       bool evals, uint32_t *n, uint32_t *cut);

/*
 * Stack @id kept in pi->stacks as written: py->out[@n] (@n AS_IS: the
 * table's own frames) with @cut. NULL: no memory.
 */
struct xstack *plread__keep(struct plread_image *pi, uint32_t id, uint32_t n, uint32_t cut);

/*
 * plbinary.c: the binary holding the eval loop (or lua_newstate) at @eval
 * in @pi's process read: a fork child's is its parent's (@parent, as its
 * header says); else by the process's mappings, or its table's module
 * records (pi->view) when it has ended. Returns 0 or -errno (*@why says).
 */
int plread_image__find_binary(struct plread_image *pi, pid_t parent, uint64_t eval, char *why,
			      size_t cap);

#endif /* HEAPSNOOP_PLREAD_INT_H */

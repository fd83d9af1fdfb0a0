/* SPDX-License-Identifier: MIT */
/*
 * pllua.h - PUC Lua's --preload reading (pllua.c), the pl_* of its row
 * (luainterp.c, interp/ops.h) on --preload's images
 * (python/plpython_int.h): its state of an image in the image's slot
 * (the VM found in its binary, the collector's name records), its stacks
 * named and spliced, its closing lines. docs/COLLECTOR.md, "Lua frames".
 */
#ifndef HEAPSNOOP_PLLUA_H
#define HEAPSNOOP_PLLUA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pl_counts;
struct plread_image;
struct xstack;

/* @pi's state made, or made empty again (a binary read again): 0 or -ENOMEM. */
int pllua__new(struct plread_image *pi);
/* @pi's state freed (none: nothing). */
void pllua__free(struct plread_image *pi);
/*
 * @pi's Lua VM read from its binary @path (mapped at @start from file
 * offset @off): 0 or -errno (*@why says); a fork child's copied from its
 * @parent's.
 */
int pllua__read_binary(struct plread_image *pi, const char *path, uint64_t start, uint64_t off,
		       char *why, size_t cap);
int pllua__copy(struct plread_image *pi, const struct plread_image *parent);
/* A frame's name record (LT_LUA_NAMEREC) @w[@n], copied out, kept: true; another record: false. */
bool pllua__record(struct plread_image *pi, const uint64_t *w, uint32_t n);
/* Stack @id (@f[@depth], cut bits @cut) named and spliced, kept in pi->stacks; NULL: no memory. */
struct xstack *pllua__resolve(struct plread_image *pi, uint32_t id, const uint64_t *f,
			      uint32_t depth, uint32_t cut);
/* The closing lines of Lua's counts @c (-v: @verbose). */
void pllua__counts_said(const struct pl_counts *c, bool verbose);

#endif /* HEAPSNOOP_PLLUA_H */

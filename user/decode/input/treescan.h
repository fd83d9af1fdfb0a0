/* SPDX-License-Identifier: MIT */
/*
 * treescan.h - the streaming filter (`heapdecode` alone) on a log of the
 * tree form (docs/OUTPUT.md, "Stacks as a tree"): each line up to
 * TREESCAN_LINE_MAX bytes is looked at whole, its `tree` and `node`
 * records taken into a table (nodetab.h), and a `live` or `stack` record
 * that names its stack by node= written with that stack after it as the
 * filter writes a stack of tokens, `~b#size: N, 0x..` (a `~b#` for each 31
 * frames, the first with the size, the others size 0); every line, and
 * every longer one as it comes, goes through the token filter (tokscan.h)
 * as before. Memory: the line's bytes and the trees of the dump read.
 *
 * A line longer than that is no heapsnoop record: its trees are not
 * numbered past it (nodetab.h: no node taken after it, said), so that no
 * stack is ever named by a wrong node.
 */
#ifndef HEAPDECODE_TREESCAN_H
#define HEAPDECODE_TREESCAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "input/tokscan.h"

/* The longest line looked at whole: a `node` record of REC_MAX_DEPTH frames and a prefix. */
#define TREESCAN_LINE_MAX	(64u << 10)

struct treescan;

/* Lines to @ts (which outlives it), stacks after them to @out; NULL: no memory. */
struct treescan *treescan__new(struct tokscan *ts, FILE *out);
void treescan__free(struct treescan *tr);

/* As tokscan's: an input named @name begins, @len bytes of it, its end. */
void treescan__begin(struct treescan *tr, const char *name);
void treescan__feed(struct treescan *tr, const char *buf, size_t len);
void treescan__end(struct treescan *tr);

/*
 * A stack of @size bytes, @depth @frames, as the filter writes a stack of
 * tokens: " ~b#size: N, 0x.." for each 31 frames (the first with the
 * size, the others size 0), to @out.
 */
void treescan__blines(FILE *out, uint64_t size, const uint64_t *frames, uint32_t depth);

/* Records left unchanged because they do not fit their tree (said, each). */
unsigned long treescan__malformed(const struct treescan *tr);

#endif /* HEAPDECODE_TREESCAN_H */

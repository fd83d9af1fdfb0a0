/* SPDX-License-Identifier: MIT */
/*
 * stacktail.h - the outer frames of the collector's deep stacks: a stack
 * deeper than one `~m#` token holds (31 frames) keeps its innermost 31
 * in the block's blob, as lws_alloc_metadata does, and the rest here,
 * interned once for every block from that stack, its continuation tokens
 * (records.h, docs/OUTPUT.md: depth=) encoded once; the block's node
 * keeps the id (struct hs_am_node's tail). Memory grows with distinct
 * deep stacks, never with blocks.
 *
 * Called inside malloc: no heap (an arena and an index mapped on first
 * use), no lock (entries are written, then published by one
 * compare-and-exchange; a fork at any moment leaves the child a table it
 * can use). Entries are never removed: a program's deep stacks are few.
 */
#ifndef HEAPSNOOP_COLLECTOR_STACKTAIL_H
#define HEAPSNOOP_COLLECTOR_STACKTAIL_H

#include <stdint.h>

/* Bytes of address space the arena reserves (pages used as entries are). */
#define STACKTAIL_ARENA		(64u << 20)
/* Entries at most (the index is twice as large). */
#define STACKTAIL_MAX		(1u << 16)

/*
 * The id (1..) of the frames past the first HS_MAX_DEPTH of the stack
 * @frames[@depth] (HS_MAX_DEPTH < @depth <= REC_MAX_DEPTH), interned:
 * the same for the same frames. 0: not kept (the table is full, or no
 * memory): the caller keeps the first 31 frames and says cut=depth.
 */
uint32_t stacktail__intern(const uint64_t *frames, uint32_t depth);

/*
 * Tail @id's continuation tokens, " ~m#B[ ~m#C...]", NUL-terminated, and
 * the whole stack's depth in *@depth (depth=); NULL for an id not given.
 */
const char *stacktail__tokens(uint32_t id, uint32_t *depth);

#endif /* HEAPSNOOP_COLLECTOR_STACKTAIL_H */

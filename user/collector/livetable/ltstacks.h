/* SPDX-License-Identifier: MIT */
/*
 * ltstacks.h - the live table's stacks, each interned once (a program
 * allocates from few stacks many times), as a tree of nodes that share
 * their outer frames (heaptrack's trace tree, a run of frames a node:
 * include/heapsnoop/livetable.h, struct lt_stack), so that millions of
 * stacks that differ in their inner frames cost a node or two each; and
 * the records of the stacks' region that no entry names (a code object's,
 * a Lua frame's name).
 */
#ifndef HEAPSNOOP_COLLECTOR_LTSTACKS_H
#define HEAPSNOOP_COLLECTOR_LTSTACKS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Frames a node holds (the last, innermost one of a stack: 1 to this
 * many). Its nodes start at the stack's outer end, every LT_NODE_FRAMES
 * frames, so that two stacks share every node of the frames they share
 * from there, and a stack is found again by its own frames alone. 8:
 * prog_paths 22's 2^22 stacks of 28 frames, each from the outer end one
 * of two call sites on, in 58 bytes a stack (4: 50, 16: 104, measured);
 * a stack of 28 frames 4 nodes to look through (4: 7); bench/workload.c's
 * calls 1720 instructions (callgrind; 4: 1821; version 2's one record a
 * stack: 1559).
 */
#ifndef LT_NODE_FRAMES
#define LT_NODE_FRAMES 8
#endif

/* The private index (ltindex.h) and module list (ltmods.h) made. Returns 0 or -ENOMEM. */
int ltstacks__init(void);

/*
 * The id of stack @frames[@depth] (call site first, depth <= LT_MAX_DEPTH)
 * with cut bits @cut (REC_CUT_*): the node of its inner frames, found,
 * or added with the nodes of its outer frames that are not there yet
 * (LEAF); one with interpreter words (>= 2^63, after its native frames:
 * LT_PY_WORD) a JOIN of its native chain and its words' chain; 0 if
 * there was no room (counted in lost_stacks). Looked up
 * without a lock (one probe of the index, then its nodes compared);
 * nodes are added under a lock, each once, so two threads never add the
 * same one. A new stack first records the modules loaded since the last
 * look (ltmods.h: it may take the loader's lock and allocate: the caller
 * is marked inside the collector). A section of its own (they nest).
 */
uint32_t ltstacks__intern(const uint64_t *frames, uint32_t depth, uint32_t cut);

/* The id of stack @frames[@depth] with cut bits @cut if it is interned already, else 0. */
uint32_t ltstacks__find(const uint64_t *frames, uint32_t depth, uint32_t cut);

/*
 * Room for a record of @n words (at most LT_MAX_DEPTH) that no entry
 * names, in the stacks' region (a code object's record, livetable.h
 * LT_PY_CODEREC): its words, to fill, then ltstacks__commit(*@id, @n);
 * NULL when there is no room (counted in lost_stacks). Inside a section.
 */
uint64_t *ltstacks__reserve(uint32_t n, uint32_t *id);
void ltstacks__commit(uint32_t id, uint32_t n);

/* In a fork child: the locks made anew (taken inside sections only: no thread held them). */
void ltstacks__forked(void);

#endif /* HEAPSNOOP_COLLECTOR_LTSTACKS_H */

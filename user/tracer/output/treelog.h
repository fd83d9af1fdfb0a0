/* SPDX-License-Identifier: MIT */
/*
 * treelog.h - the stacks of one process that a dump (or an exit section)
 * writes, as the tree of their frames that its `tree` and `node` records
 * hold (docs/OUTPUT.md, "Stacks as a tree"): the process's tree
 * (track/stacktree.h) cut down to the stacks the records name, each chain
 * of single children one node, numbered in preorder; and each stack's
 * node there, which its `live` and `stack` records name.
 *
 * Made in the dump's writer (a forked child's snapshot, or the loop at
 * the last dump): its memory is the writer's, 8 bytes a node of the tree
 * it keeps beside two bitmaps of a bit per 2 bytes of the tree's arena.
 */
#ifndef HEAPSNOOP_TREELOG_H
#define HEAPSNOOP_TREELOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "frametab.h"
#include "track/stacktree.h"

/* A stack that has no node: no frames (its records are of the form with tokens). */
#define TREE_LOG_NONE	UINT32_MAX

struct tree_log;

/* An empty set of the stacks of @st (which outlives it); NULL: no memory. */
struct tree_log *tree_log__new(const struct stack_tree *st);
void tree_log__free(struct tree_log *tl);

/* Stack @id's records are in the dump. */
void tree_log__need(struct tree_log *tl, uint32_t id);

/*
 * The tree cut down, once every stack is needed, its nodes counted; and
 * with @ft, the frames of process @pid that are not native code it holds
 * marked (frametab__need()). Returns 0 or -ENOMEM.
 */
int tree_log__build(struct tree_log *tl, struct frametab *ft, uint32_t pid);

/* How many nodes the tree has (its `tree` record's nodes=). */
uint32_t tree_log__count(const struct tree_log *tl);

/*
 * Needed stack @id's index among the nodes the tree was cut down to
 * (built): below tree_log__marked(), each its own; for a table by stack.
 */
uint32_t tree_log__index(const struct tree_log *tl, uint32_t id);
uint32_t tree_log__marked(const struct tree_log *tl);

/*
 * Write the `tree` record of process @pid and its `node` records, in
 * preorder; after the node a needed stack ends at (numbered from 0), @fn
 * with the stack and that node (TREE_LOG_NONE: a stack of no frames,
 * which has none), @last true if it is the one just written, for the
 * records that name it; a stack that ends where its parent's node does,
 * after that node's children. Stops at @fn's first non-zero return,
 * which it returns; 0, or -EIO if @out failed.
 */
int tree_log__write(const struct tree_log *tl, uint32_t pid, FILE *out,
		    int (*fn)(void *ctx, uint32_t id, uint32_t node, bool last), void *ctx);

#endif /* HEAPSNOOP_TREELOG_H */

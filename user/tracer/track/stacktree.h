/* SPDX-License-Identifier: MIT */
/*
 * stacktree.h - one process's unique stacks, interned as a tree of
 * frames (heaptrack's trace tree, a node per (parent, frame), with its
 * chains of single children kept as one node: a radix tree). The root
 * side is a stack's outermost frame, where stacks share the most; each
 * node holds a run of frames, each frame as the difference from the one
 * before it on the way from the root (a varint, a byte or two between
 * nearby call sites), so a new stack costs the frames it does not share
 * with the stacks before it, and a node's key (its parent, its first
 * difference) is read from the node alone.
 *
 * A stack is the node its innermost frame ends: its id is the node's
 * offset in the tree's arena (stable; the live table keeps it), and the
 * node carries STACK_TREE_PAYLOAD bytes of the caller's (acct.c's
 * whole-run counts), zeroed when the stack is new. Stacks whose cut flags
 * (stacks.h STACK_*) differ hang under roots of their own, so the same
 * frames cut and not cut are two stacks. A stack that ends where another
 * one's frames go on ends at a node of its own, of no frames, under the
 * node where it ends.
 *
 * Memory: a node is 16 bytes (its parent, its first two children), 6
 * for a leaf made under a node (lean), 20 for a branch that refers to
 * its frames where they are; its frames' varints, and the payload if it
 * ends a stack; an index of the roots' children and those past a node's
 * second, 5 bytes a slot, kept at most 4/5 full (docs/DESIGN.md, "Stack
 * tables", has the numbers).
 * Nothing is ever removed: a process's tree goes whole when it ends or
 * execs. Not thread-safe: the loop's thread alone touches it.
 */
#ifndef HEAPSNOOP_STACKTREE_H
#define HEAPSNOOP_STACKTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of the caller's a stack's node holds (acct.h's small counts). */
#define STACK_TREE_PAYLOAD	8

/*
 * A node's parent: another node's id, or for a node at the root
 * STACK_TREE_ROOT | the cut flags of the stacks under it.
 */
#define STACK_TREE_ROOT		0xfffffff8u

static inline bool stack_tree__is_node(uint32_t parent)
{
	return parent < STACK_TREE_ROOT;
}

struct stack_tree;

/* What a tree holds, for -v and the closing accounting. */
struct stack_tree_stats {
	size_t stacks;		/* unique stacks (nodes that end one) */
	size_t nodes;		/* nodes in all: stacks and branch points */
	size_t frames;		/* frames the nodes hold */
	size_t arena_bytes;	/* the nodes' memory, allocated */
	size_t used_bytes;	/* ... of it in nodes */
	size_t index_slots;	/* the index of children by (parent, first frame) */
	size_t index_used;	/* ... the children in it: a root's, a node's past two */
	size_t index_bytes;
};

/* An empty tree; NULL: no memory. */
struct stack_tree *stack_tree__new(void);
void stack_tree__free(struct stack_tree *st);

/*
 * Intern the stack of @n (<= REC_MAX_DEPTH) @frames, innermost first,
 * with cut flags @flags (STACK_CUT_ALL bits): its id in *@id, and
 * *@created true if it is new (its payload zeroed). Returns 0, -EINVAL
 * (too deep, unknown flags) or -ENOMEM (the tree unchanged; past 4 GiB
 * of nodes as well).
 */
int stack_tree__intern(struct stack_tree *st, const uint64_t *frames, uint32_t n, uint32_t flags,
		       uint32_t *id, bool *created);

/*
 * Stack @id's STACK_TREE_PAYLOAD bytes (unaligned: read and written
 * with memcpy), valid until the next stack_tree__intern().
 */
unsigned char *stack_tree__payload(const struct stack_tree *st, uint32_t id);

/* Stack @id's cut flags (STACK_* bits). */
uint32_t stack_tree__flags(const struct stack_tree *st, uint32_t id);

/*
 * Stack @id's frames, innermost first, into @out (REC_MAX_DEPTH
 * entries); returns how many, 0 where a stack of more than a few dozen
 * nodes finds no memory for its chain.
 */
uint32_t stack_tree__frames(const struct stack_tree *st, uint32_t id, uint64_t *out);

size_t stack_tree__count(const struct stack_tree *st);

/* The tree's serial number: never another tree's, while the program runs. */
uint64_t stack_tree__serial(const struct stack_tree *st);

/*
 * Each stack (@nodes false) or every node (true) to @fn, in no
 * particular order, no interning meanwhile; stops at @fn's first non-zero
 * return, which it returns. 0, or -ENOMEM.
 */
int stack_tree__for_each(const struct stack_tree *st, bool nodes,
			 int (*fn)(void *ctx, uint32_t id), void *ctx);

/* A node as the dump's writer walks the tree (output/treelog.c). */
struct stack_node {
	uint32_t parent;	/* a node's id, or STACK_TREE_ROOT | flags */
	uint32_t nframes;	/* its frames (0: a stack that ends at its parent's end) */
	bool stack;		/* it ends a stack (its payload is there) */
};

void stack_tree__node(const struct stack_tree *st, uint32_t id, struct stack_node *n);

/*
 * Node @id's frames, outermost first, into @out (its nframes of them),
 * from @prev, the frame before its first one: its parent's last, 0 at
 * the root. Returns the last one (@prev if it has none).
 */
uint64_t stack_tree__edge(const struct stack_tree *st, uint32_t id, uint64_t prev, uint64_t *out);

/* Every id is below this: the arena's span, for the writer's bitmaps. */
size_t stack_tree__span(const struct stack_tree *st);

void stack_tree__stats(const struct stack_tree *st, struct stack_tree_stats *s);
/* Bytes the tree holds: the arena, the index. */
size_t stack_tree__memory(const struct stack_tree *st);

#endif /* HEAPSNOOP_STACKTREE_H */

/* SPDX-License-Identifier: MIT */
/*
 * ltstacks.h - the live table's stacks, each interned once (a program
 * allocates from few stacks many times: heaptrack keeps a trie of them,
 * the tracer stacks.c), and its module records, each written before any
 * stack whose frames may lie in it, so that a dump made after the
 * process died has its `map` lines without /proc/PID/maps.
 */
#ifndef HEAPSNOOP_COLLECTOR_LTSTACKS_H
#define HEAPSNOOP_COLLECTOR_LTSTACKS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The private intern chains' heads (mapped once, 1 MiB of address
 * space, pages touched as used), and the modules loaded so far.
 * Returns 0 or -ENOMEM.
 */
int ltstacks__init(void);

/*
 * The id of stack @frames[@depth] (call site first, depth <= LT_MAX_DEPTH)
 * with cut bits @cut (REC_CUT_*), appended if new; 0 if the stacks are
 * full (counted in lost_stacks). Lock-free: two threads that append the
 * same new stack at once leave one record unused, never a wrong id. A new
 * stack first records the modules loaded since the last look (it may
 * take the loader's lock and allocate: the caller is marked inside the
 * collector). A section of its own (they nest).
 */
uint32_t ltstacks__intern(const uint64_t *frames, uint32_t depth, uint32_t cut);

/* The id of stack @frames[@depth] with cut bits @cut if it is interned already, else 0. */
uint32_t ltstacks__find(const uint64_t *frames, uint32_t depth, uint32_t cut);

/*
 * Room for a record of @n words (at most LT_MAX_DEPTH) that no entry
 * names, in the stacks' region (a code object's record, livetable.h
 * LT_PY_CODEREC): its words, to fill, then ltstacks__commit(*@id, @n);
 * NULL when the region is full (counted in lost_stacks). Inside a
 * section.
 */
uint64_t *ltstacks__reserve(uint32_t n, uint32_t *id);
void ltstacks__commit(uint32_t id, uint32_t n);

/*
 * In a fork child: the module lock made anew (it is taken inside
 * sections only, so no thread held it at the fork).
 */
void ltstacks__forked(void);

/*
 * The module records' gone flags into the bitmap @bits (@n bits), at the
 * fork; put back into a fork child's copy of the table (the parent may
 * mark one gone while the child copies).
 */
void ltstacks__gone(uint32_t *bits, unsigned int n);
void ltstacks__restore_gone(const uint32_t *bits, unsigned int n);

#endif /* HEAPSNOOP_COLLECTOR_LTSTACKS_H */

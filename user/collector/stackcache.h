/* SPDX-License-Identifier: MIT */
/*
 * stackcache.h - the preload collector's encoded stacks, kept: encoding a
 * stack's bits (codec) costs more than unwinding it, and a program
 * allocates from few stacks many times (heaptrack interns them in a trie,
 * the tracer in stacks.c). A table of 8192 entries, 4096 sets of two, by
 * a hash of the frames, mapped on first use (~4.8 MB of address space,
 * pages touched as entries are), each set under its own try-lock: a
 * thread that finds a set busy encodes for itself. Frames are compared, never
 * trusted to the hash.
 */
#ifndef HEAPSNOOP_COLLECTOR_STACKCACHE_H
#define HEAPSNOOP_COLLECTOR_STACKCACHE_H

#include <stdint.h>

#include "heapsnoop/codec.h"

/*
 * The encoded bits of @frames[@depth] into @sb, from the table or encoded
 * (and kept). Returns 0 or hs_stack_bits_encode()'s error. Allocates
 * nothing from the heap (mmap), so callable inside malloc.
 */
int stackcache__bits(const uint64_t *frames, uint32_t depth, struct hs_stack_bits *sb);

#endif /* HEAPSNOOP_COLLECTOR_STACKCACHE_H */

/* SPDX-License-Identifier: MIT */
/*
 * stackcache.h - the stacks interned last, by their frames, in front of
 * the processes' trees (stacktree.h): an allocation from a stack seen a
 * moment ago (a loop's) is found by one hash and one comparison of its
 * frames, not by a walk down its tree. Exact: an entry is its stack's
 * frames, cut flags and tree, compared whole; a tree is known by a serial
 * number never given twice (a process that execs or ends takes its
 * entries with it). Fixed size (STACK_CACHE_SLOTS entries of stacks up to
 * STACK_CACHE_DEPTH frames, the deeper ones never cached), one for all
 * processes: memory that does not grow with stacks or processes.
 */
#ifndef HEAPSNOOP_STACKCACHE_H
#define HEAPSNOOP_STACKCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STACK_CACHE_SLOTS	2048
#define STACK_CACHE_DEPTH	48

struct stack_cache;

/* An empty cache; NULL: no memory. */
struct stack_cache *stack_cache__new(void);
void stack_cache__free(struct stack_cache *sc);

/*
 * Look up the stack of @n @frames (innermost first) with cut flags
 * @flags in the tree of serial @tree: true and its id in *@id if cached.
 * *@hash is set either way, for stack_cache__put().
 */
bool stack_cache__find(const struct stack_cache *sc, uint64_t tree, const uint64_t *frames,
		       uint32_t n, uint32_t flags, uint64_t *hash, uint32_t *id);

/* The same stack is @id of that tree (after a miss, with its *@hash). */
void stack_cache__put(struct stack_cache *sc, uint64_t tree, const uint64_t *frames, uint32_t n,
		      uint32_t flags, uint64_t hash, uint32_t id);

/* Bytes it holds. */
size_t stack_cache__memory(const struct stack_cache *sc);

#endif /* HEAPSNOOP_STACKCACHE_H */

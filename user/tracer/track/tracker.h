/* SPDX-License-Identifier: MIT */
/*
 * tracker.h - the live (outstanding) allocations of one traced process
 * (procs.c keeps one table per process), keyed by address. 28 bytes an
 * entry in an open-addressing table kept 3/8 to 3/4 full: 38-75 bytes per
 * live allocation, up to ~112 while it doubles (the old table is emptied
 * into the new one step by step, never in one stop); no fixed limit (it
 * grows while memory lasts). Each alloc and release may move up to 128
 * entries of the old table: O(1), bounded.
 */
#ifndef HEAPSNOOP_TRACKER_H
#define HEAPSNOOP_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Packed to 28 bytes: 4 less per live allocation than padded. A size
 * and its shed level are bit-fields: read them into a uint64_t before
 * arithmetic (a 56-bit field's sum wraps at 2^56).
 */
#define LIVE_SIZE_MAX	((1ULL << 56) - 1)
struct live_alloc {
	uint64_t addr;		/* 0 marks an empty slot */
	uint64_t size : 56;	/* bytes (no allocation of 2^56 succeeds) */
	/*
	 * 0, or recorded as a sample while load was shed, at this level
	 * (include/heapsnoop/event.h HS_EVF_SHED_MASK, hs_shed_mean())
	 */
	uint64_t shed : 8;
	uint64_t seq;		/* its record's ring position + 1 (stream/ring.h) */
	uint32_t stack;		/* its stack's id in the process's tree (stacktree.h) */
} __attribute__((packed, aligned(4)));

struct tracker;

struct tracker *tracker__new(void);
void tracker__free(struct tracker *t);

/*
 * Record a live allocation. If its address was live already, its free was
 * never seen: the old entry is replaced and *@replaced set to it (for the
 * caller's accounting). Returns 0 or -ENOMEM (nothing changed).
 */
int tracker__alloc(struct tracker *t, const struct live_alloc *a, struct live_alloc *replaced,
		   int *was_replaced);

/*
 * Release @addr if its record came before @before_seq (its seq is lower;
 * UINT64_MAX: unconditionally). Returns 0 and the entry in *@gone;
 * -ENOENT if not live (allocated before tracing began, or freed twice);
 * -EAGAIN if it is live but newer (the address was handed out again in
 * between).
 */
int tracker__release(struct tracker *t, uint64_t addr, uint64_t before_seq,
		     struct live_alloc *gone);

/*
 * Ask the CPU for the slot where @addr would be (the table's), so that
 * the cache miss overlaps the caller's other work (unwinding the record's
 * stack) instead of stalling tracker__alloc(). No effect on the table.
 */
void tracker__prefetch(const struct tracker *t, uint64_t addr);

/* Call @fn for every live allocation (no changes to @t meanwhile). */
void tracker__for_each(const struct tracker *t,
		       void (*fn)(const struct live_alloc *a, void *ctx), void *ctx);

size_t tracker__count(const struct tracker *t);
uint64_t tracker__bytes(const struct tracker *t);
/* Bytes of memory the table itself holds (both tables while growing). */
size_t tracker__memory(const struct tracker *t);
/* Is a growth under way (entries still in the old table)? For tests. */
bool tracker__growing(const struct tracker *t);

#endif /* HEAPSNOOP_TRACKER_H */

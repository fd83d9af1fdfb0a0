/* SPDX-License-Identifier: MIT */
/*
 * namecache.h - the live view's names of native frames (liveview.h),
 * keyed by their file (its build ID, or its path without one) and the
 * return address's offset in it, kept across redraws so that each
 * redraw's child looks up only frames it has not seen named.
 *
 * Bounded, least recently used out: each redraw is a generation
 * (namecache__next()); a name is stamped with the last one it was used
 * in. The user of a name is a forked child, whose stamps die with it, so
 * it says which names it used (namecache__stale(): a name not stamped
 * for NAMECACHE_TOUCH generations, once per name and child) and the
 * loader stamps them (namecache__touch()). When the cache is 7/8 full at
 * a new generation, the names not used for more than NAMECACHE_TOUCH
 * generations go (CLOCK's approximation of LRU: those used in the last
 * redraws stay); with every name in use it stays full, and a new name is
 * then not kept (looked up again at the next redraw: never wrong, slower).
 */
#ifndef HEAPSNOOP_NAMECACHE_H
#define HEAPSNOOP_NAMECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Generations a name may go unstamped while in use: the children's reports, 1 in this many. */
#define NAMECACHE_TOUCH	8

/* One frame's name: its file's key and offset, then what it is named. */
struct name_ent {
	uint64_t off;
	char *key, *func, *loc;	/* loc: "file:line", or "" */
	uint32_t used;		/* the generation it was last stamped in */
};

struct namecache;

/* An empty cache of @max names at most (at least 8). NULL: no memory. */
struct namecache *namecache__new(size_t max);
void namecache__free(struct namecache *nc);

/* The name of (@key, @off), or NULL. */
struct name_ent *namecache__find(struct namecache *nc, const char *key, uint64_t off);

/*
 * Keep (@key, @off) named @func at @loc (copied), stamped now. NULL when
 * it is kept already, the cache is full, or no memory: not kept.
 */
struct name_ent *namecache__add(struct namecache *nc, const char *key, uint64_t off,
				const char *func, const char *loc);

/*
 * Is @e due a report of its use (unstamped for NAMECACHE_TOUCH
 * generations)? If so it is stamped now, in this copy of the cache (a
 * child's: it reports each name once), and the caller reports it.
 */
bool namecache__stale(struct namecache *nc, struct name_ent *e);

/* @e (a report's) used in this generation. */
void namecache__touch(struct namecache *nc, struct name_ent *e);

/*
 * A new generation (a redraw begins); at 7/8 full, the names unused for
 * more than NAMECACHE_TOUCH generations evicted. Returns how many went.
 */
size_t namecache__next(struct namecache *nc);

size_t namecache__count(const struct namecache *nc);

#endif /* HEAPSNOOP_NAMECACHE_H */

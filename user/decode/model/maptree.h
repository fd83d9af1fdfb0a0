/* SPDX-License-Identifier: MIT */
/*
 * maptree.h - one process's mappings as heapdecode reads them from `map`
 * records (docs/OUTPUT.md), in any number and any order: a balanced tree
 * (glibc's tsearch, a red-black tree) of disjoint mappings, so each record
 * costs O(log n) whatever the log holds (a sorted array cost a stranger's
 * 100,000 records 50 s). A mapping overlapping earlier ones replaces them,
 * as a later mmap() does.
 */
#ifndef HEAPDECODE_MAPTREE_H
#define HEAPDECODE_MAPTREE_H

#include <stdint.h>

#include "mapset.h"

struct maptree;

/* An empty set; NULL: no memory. */
struct maptree *maptree__new(void);
void maptree__free(struct maptree *t);

/*
 * Add a copy of @m (path duplicated), removing every mapping it overlaps.
 * An empty or reversed range (end <= start) is not a mapping: -EINVAL.
 * Returns 0, -EINVAL or -ENOMEM.
 */
int maptree__add(struct maptree *t, const struct mapping *m);

/* The mapping holding @addr, or NULL; valid until the next add. O(log n). */
const struct mapping *maptree__find(const struct maptree *t, uint64_t addr);

#endif /* HEAPDECODE_MAPTREE_H */

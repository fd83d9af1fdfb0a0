// SPDX-License-Identifier: MIT
/*
 * maptree.c - a process's mappings in glibc's tsearch tree (see
 * maptree.h). The tree holds disjoint ranges only, so "overlaps" is a
 * total order among them: the comparison says equal for any overlap,
 * which finds the mappings a new one replaces and the one holding an
 * address with one tfind() each.
 */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "maptree.h"

struct maptree {
	void *root;
};

static int cmp_range(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	if (x->end <= y->start)
		return -1;
	return x->start >= y->end ? 1 : 0;
}

static void free_mapping(void *p)
{
	struct mapping *m = p;

	free(m->path);
	free(m);
}

struct maptree *maptree__new(void)
{
	return calloc(1, sizeof(struct maptree));
}

void maptree__free(struct maptree *t)
{
	if (!t)
		return;
	tdestroy(t->root, free_mapping);
	free(t);
}

int maptree__add(struct maptree *t, const struct mapping *m)
{
	struct mapping *copy, **old;

	if (m->end <= m->start)
		return -EINVAL;
	/* Each mapping is removed at most once: O(log n) amortized. */
	while ((old = tfind(m, &t->root, cmp_range))) {
		struct mapping *gone = *old;

		tdelete(gone, &t->root, cmp_range);
		free_mapping(gone);
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *m;
	copy->path = strdup(m->path);
	if (!copy->path || !tsearch(copy, &t->root, cmp_range)) {
		free(copy->path);
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

const struct mapping *maptree__find(const struct maptree *t, uint64_t addr)
{
	struct mapping key = { .start = addr, .end = addr + 1 };
	struct mapping **hit;

	if (addr == UINT64_MAX)
		return NULL;
	hit = tfind(&key, &t->root, cmp_range);
	return hit ? *hit : NULL;
}

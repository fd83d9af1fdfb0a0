// SPDX-License-Identifier: MIT
/*
 * namecache.c - the live view's frame names, bounded, least recently
 * used out (see namecache.h). The eviction is CLOCK's idea (a use
 * stamps, a sweep takes what was not stamped lately) with generations
 * for its hand, since the uses are seen only through the children's
 * reports.
 */
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "namecache.h"

struct namecache {
	struct htab *h;		/* (key, off) -> struct name_ent */
	size_t max;
	uint32_t gen;
};

struct name_probe {
	const char *key;
	uint64_t off;
};

static uint64_t name_hash(const char *key, uint64_t off)
{
	return htab_hash2(htab_hash_str(HTAB_STR_SEED, key), off);
}

static bool name_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct name_ent *e = (const struct name_ent *)stored;
	const struct name_probe *p = (const struct name_probe *)probe;

	(void)ctx;
	return e->off == p->off && !strcmp(e->key, p->key);
}

static void ent_free(struct name_ent *e)
{
	if (!e)
		return;
	free(e->key);
	free(e->func);
	free(e->loc);
	free(e);
}

struct namecache *namecache__new(size_t max)
{
	struct namecache *nc = calloc(1, sizeof(*nc));

	if (!nc || !(nc->h = htab__new(1024, name_equal, NULL))) {
		free(nc);
		return NULL;
	}
	nc->max = max < 8 ? 8 : max;
	return nc;
}

void namecache__free(struct namecache *nc)
{
	size_t pos = 0;
	struct name_ent *e;

	if (!nc)
		return;
	while ((e = htab__next(nc->h, &pos, NULL)))
		ent_free(e);
	htab__free(nc->h);
	free(nc);
}

struct name_ent *namecache__find(struct namecache *nc, const char *key, uint64_t off)
{
	struct name_probe p = { key, off };

	return htab__find(nc->h, name_hash(key, off), (uintptr_t)&p);
}

struct name_ent *namecache__add(struct namecache *nc, const char *key, uint64_t off,
				const char *func, const char *loc)
{
	struct name_ent *e;

	if (htab__count(nc->h) >= nc->max || namecache__find(nc, key, off))
		return NULL;
	e = malloc(sizeof(*e));
	if (!e)
		return NULL;
	*e = (struct name_ent){ off, strdup(key), strdup(func), strdup(loc), nc->gen };
	if (!e->key || !e->func || !e->loc ||
	    htab__add(nc->h, name_hash(key, off), (uintptr_t)e, e)) {
		ent_free(e);
		return NULL;
	}
	return e;
}

bool namecache__stale(struct namecache *nc, struct name_ent *e)
{
	if (nc->gen - e->used < NAMECACHE_TOUCH)
		return false;
	e->used = nc->gen;
	return true;
}

void namecache__touch(struct namecache *nc, struct name_ent *e)
{
	e->used = nc->gen;
}

size_t namecache__next(struct namecache *nc)
{
	size_t n = htab__count(nc->h), k = 0, pos = 0;
	struct name_ent *e, **v;

	nc->gen++;
	if (n < nc->max - nc->max / 8)
		return 0;
	/* The victims first: the table is not changed while it is walked. */
	v = malloc(n * sizeof(*v));
	if (!v)
		return 0;
	while ((e = htab__next(nc->h, &pos, NULL)))
		if (nc->gen - e->used > NAMECACHE_TOUCH)
			v[k++] = e;
	for (size_t i = 0; i < k; i++) {
		struct name_probe p = { v[i]->key, v[i]->off };

		htab__delete(nc->h, name_hash(p.key, p.off), (uintptr_t)&p);
		ent_free(v[i]);
	}
	free(v);
	return k;
}

size_t namecache__count(const struct namecache *nc)
{
	return htab__count(nc->h);
}

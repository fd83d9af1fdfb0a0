// SPDX-License-Identifier: MIT
/*
 * fileid.c - values by file identity (see fileid.h), in the generic hash
 * table (htab.h): each entry holds its (dev, ino), which is its key.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "fileid.h"
#include "htab.h"

struct file_id {
	uint64_t dev, ino;
};

struct entry {
	struct file_id id;	/* the key: htab holds &id */
	void *value;
};

struct fileid_map {
	struct htab *h;
};

static bool same_file(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct file_id *a = (const void *)stored, *b = (const void *)probe;

	(void)ctx;
	return a->dev == b->dev && a->ino == b->ino;
}

struct fileid_map *fileid_map__new(void)
{
	struct fileid_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->h = htab__new(64, same_file, NULL);
	if (!m->h) {
		free(m);
		return NULL;
	}
	return m;
}

void fileid_map__free(struct fileid_map *m, void (*free_value)(void *value))
{
	struct entry *e;
	size_t pos = 0;

	if (!m)
		return;
	while ((e = htab__next(m->h, &pos, NULL))) {
		if (free_value)
			free_value(e->value);
		free(e);
	}
	htab__free(m->h);
	free(m);
}

void *fileid_map__find(const struct fileid_map *m, uint64_t dev, uint64_t ino)
{
	struct file_id id = { dev, ino };
	struct entry *e = htab__find(m->h, htab_hash2(dev, ino), (uintptr_t)&id);

	return e ? e->value : NULL;
}

int fileid_map__add(struct fileid_map *m, uint64_t dev, uint64_t ino, void *value)
{
	struct entry *e = malloc(sizeof(*e));

	if (!e)
		return -ENOMEM;
	*e = (struct entry){ { dev, ino }, value };
	if (htab__add(m->h, htab_hash2(dev, ino), (uintptr_t)&e->id, e)) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

size_t fileid_map__count(const struct fileid_map *m)
{
	return htab__count(m->h);
}

int fileid_map__prune(struct fileid_map *m, bool (*drop)(void *value, void *ctx), void *ctx,
		      void (*free_value)(void *value))
{
	size_t n = 0, pos = 0, cap = htab__count(m->h);
	struct entry **v, *e;

	if (!cap)
		return 0;
	/* Listed first: the table may not change while it is walked. */
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	while ((e = htab__next(m->h, &pos, NULL)))
		if (drop(e->value, ctx))
			v[n++] = e;
	for (size_t i = 0; i < n; i++) {
		htab__delete(m->h, htab_hash2(v[i]->id.dev, v[i]->id.ino), (uintptr_t)&v[i]->id);
		if (free_value)
			free_value(v[i]->value);
		free(v[i]);
	}
	free(v);
	return (int)n;
}

// SPDX-License-Identifier: MIT
/*
 * mapset.c - a process's mappings, sorted by start address, found by
 * binary search (see mapset.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapset.h"

void mapset__touch(struct mapset *pm)
{
	static uint64_t next;

	pm->gen = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}

struct mapset *mapset__new(pid_t pid)
{
	struct mapset *pm = calloc(1, sizeof(*pm));

	if (pm) {
		pm->pid = pid;
		mapset__touch(pm);
	}
	return pm;
}

int mapset__add(struct mapset *pm, const struct mapping *m)
{
	struct mapping *v;
	size_t i = 0, j;

	mapset__touch(pm);
	for (j = 0; j < pm->n; j++) {
		if (pm->v[j].start < m->end && m->start < pm->v[j].end) {
			free(pm->v[j].path);
			memmove(&pm->v[j], &pm->v[j + 1], (pm->n - j - 1) * sizeof(*v));
			pm->n--;
			j--;
		}
	}
	v = realloc(pm->v, (pm->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	pm->v = v;
	while (i < pm->n && pm->v[i].start < m->start)
		i++;
	memmove(&pm->v[i + 1], &pm->v[i], (pm->n - i) * sizeof(*v));
	pm->v[i] = *m;
	pm->v[i].path = strdup(m->path);
	if (!pm->v[i].path) {
		memmove(&pm->v[i], &pm->v[i + 1], (pm->n - i) * sizeof(*v));
		return -ENOMEM;
	}
	pm->n++;
	return 0;
}

void mapset__free(struct mapset *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++)
		free(pm->v[i].path);
	free(pm->v);
	free(pm);
}

void mapset__pin(struct mapset *pm)
{
	pm->pins++;
}

void mapset__unpin(struct mapset *pm)
{
	if (!--pm->pins && pm->retired)
		mapset__free(pm);
}

void mapset__retire(struct mapset *pm)
{
	if (pm && pm->pins)
		pm->retired = true;
	else
		mapset__free(pm);
}

struct mapset *mapset__clone(const struct mapset *pm)
{
	struct mapset *c = mapset__new(pm->pid);

	if (!c)
		return NULL;
	c->v = calloc(pm->n ? pm->n : 1, sizeof(*c->v));
	if (!c->v) {
		free(c);
		return NULL;
	}
	for (; c->n < pm->n; c->n++) {
		c->v[c->n] = pm->v[c->n];
		c->v[c->n].path = strdup(pm->v[c->n].path);
		if (!c->v[c->n].path) {
			mapset__free(c);
			return NULL;
		}
	}
	return c;
}

const struct mapping *mapset__find(const struct mapset *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < pm->v[mid].start)
			hi = mid;
		else if (addr >= pm->v[mid].end)
			lo = mid + 1;
		else
			return &pm->v[mid];
	}
	return NULL;
}

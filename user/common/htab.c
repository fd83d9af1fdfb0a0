// SPDX-License-Identifier: MIT
/*
 * htab.c - the generic hash table (see htab.h). A slot is empty when its
 * value is NULL. Deletion shifts the rest of a probe run back into the
 * hole, so lookups never walk over deleted entries.
 */
#include <errno.h>
#include <stdlib.h>

#include "htab.h"

struct slot {
	uint64_t hash;
	uintptr_t key;
	void *value;		/* NULL: empty */
};

struct htab {
	struct slot *slots;
	size_t mask;		/* slots - 1, a power of two minus one */
	size_t count;
	htab_equal_fn equal;
	void *ctx;
};

struct htab *htab__new(size_t min_slots, htab_equal_fn equal, void *ctx)
{
	struct htab *h = calloc(1, sizeof(*h));
	size_t n = 8;

	if (!h)
		return NULL;
	while (n < min_slots)
		n *= 2;
	h->slots = calloc(n, sizeof(*h->slots));
	if (!h->slots) {
		free(h);
		return NULL;
	}
	h->mask = n - 1;
	h->equal = equal;
	h->ctx = ctx;
	return h;
}

void htab__free(struct htab *h)
{
	if (!h)
		return;
	free(h->slots);
	free(h);
}

static bool same(const struct htab *h, const struct slot *s, uint64_t hash, uintptr_t key)
{
	if (s->hash != hash)
		return false;
	return h->equal ? h->equal(s->key, key, h->ctx) : s->key == key;
}

/* The slot holding @key, or the empty slot ending its probe run. */
static size_t slot_of(const struct htab *h, uint64_t hash, uintptr_t key)
{
	size_t i = (size_t)hash & h->mask;

	while (h->slots[i].value && !same(h, &h->slots[i], hash, key))
		i = (i + 1) & h->mask;
	return i;
}

void *htab__find(const struct htab *h, uint64_t hash, uintptr_t key)
{
	return h->slots[slot_of(h, hash, key)].value;
}

static void put(struct slot *slots, size_t mask, const struct slot *e)
{
	size_t i = (size_t)e->hash & mask;

	while (slots[i].value)
		i = (i + 1) & mask;
	slots[i] = *e;
}

static int grow(struct htab *h)
{
	size_t mask = h->mask * 2 + 1;
	struct slot *v = calloc(mask + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i <= h->mask; i++)
		if (h->slots[i].value)
			put(v, mask, &h->slots[i]);
	free(h->slots);
	h->slots = v;
	h->mask = mask;
	return 0;
}

int htab__add(struct htab *h, uint64_t hash, uintptr_t key, void *value)
{
	if ((h->count + 1) * 4 > (h->mask + 1) * 3 && grow(h))
		return -ENOMEM;
	put(h->slots, h->mask, &(struct slot){ hash, key, value });
	h->count++;
	return 0;
}

void *htab__delete(struct htab *h, uint64_t hash, uintptr_t key)
{
	size_t i = slot_of(h, hash, key), j;
	void *value = h->slots[i].value;

	if (!value)
		return NULL;
	h->slots[i].value = NULL;
	h->count--;
	/* Backward shift: move later members of the run into the hole. */
	for (j = (i + 1) & h->mask; h->slots[j].value; j = (j + 1) & h->mask) {
		size_t home = (size_t)h->slots[j].hash & h->mask;

		if (((j - home) & h->mask) >= ((j - i) & h->mask)) {
			h->slots[i] = h->slots[j];
			h->slots[j].value = NULL;
			i = j;
		}
	}
	return value;
}

size_t htab__count(const struct htab *h)
{
	return h->count;
}

size_t htab__memory(const struct htab *h)
{
	return (h->mask + 1) * sizeof(*h->slots);
}

void *htab__next(const struct htab *h, size_t *pos, uintptr_t *key)
{
	for (; *pos <= h->mask; (*pos)++) {
		const struct slot *s = &h->slots[*pos];

		if (s->value) {
			(*pos)++;
			if (key)
				*key = s->key;
			return s->value;
		}
	}
	return NULL;
}

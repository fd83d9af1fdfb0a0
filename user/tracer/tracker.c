// SPDX-License-Identifier: MIT
/*
 * tracker.c - live allocations in an open-addressing hash table with linear
 * probing and backward-shift deletion (no tombstones, so a long run of
 * malloc/free keeps probe sequences short). See tracker.h.
 *
 * Not the generic table (htab.h), on purpose: this one is probed at every
 * allocation and free, keeps each 32-byte entry inline (htab would add a
 * pointer and an allocation per entry, and an indirect call per probe),
 * and is measured by bench/ and test_tracker's 10 million entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracker.h"

#define MIN_SLOTS 64	/* per process: most hold few */

struct tracker {
	struct live_alloc *slots;
	size_t mask;		/* slots - 1; slots is a power of two */
	size_t count;
	uint64_t bytes;
};

static size_t slot_of(const struct tracker *t, uint32_t pid, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)pid << 47)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & t->mask;
}

struct tracker *tracker__new(void)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->slots = calloc(MIN_SLOTS, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	t->mask = MIN_SLOTS - 1;
	return t;
}

void tracker__free(struct tracker *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static struct live_alloc *lookup(const struct tracker *t, uint32_t pid, uint64_t addr)
{
	for (size_t i = slot_of(t, pid, addr);; i = (i + 1) & t->mask) {
		struct live_alloc *s = &t->slots[i];

		if (!s->addr)
			return NULL;
		if (s->addr == addr && s->pid == pid)
			return s;
	}
}

static void insert_new(struct tracker *t, const struct live_alloc *a)
{
	size_t i = slot_of(t, a->pid, a->addr);

	while (t->slots[i].addr)
		i = (i + 1) & t->mask;
	t->slots[i] = *a;
}

static int grow(struct tracker *t)
{
	struct tracker bigger = { .mask = t->mask * 2 + 1 };

	bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].addr)
			insert_new(&bigger, &t->slots[i]);
	free(t->slots);
	t->slots = bigger.slots;
	t->mask = bigger.mask;
	return 0;
}

int tracker__alloc(struct tracker *t, const struct live_alloc *a, struct live_alloc *replaced,
		   int *was_replaced)
{
	struct live_alloc *s = lookup(t, a->pid, a->addr);

	*was_replaced = 0;
	if (s) {
		*replaced = *s;
		*was_replaced = 1;
		t->bytes += a->size - s->size;
		*s = *a;
		return 0;
	}
	if ((t->count + 1) * 4 > (t->mask + 1) * 3 && grow(t))
		return -ENOMEM;
	insert_new(t, a);
	t->count++;
	t->bytes += a->size;
	return 0;
}

/* Remove slot @i, shifting back the entries of its probe run. */
static void remove_at(struct tracker *t, size_t i)
{
	size_t j = i;

	t->count--;
	t->bytes -= t->slots[i].size;
	for (;;) {
		size_t home;

		t->slots[i].addr = 0;
		do {
			j = (j + 1) & t->mask;
			if (!t->slots[j].addr)
				return;
			home = slot_of(t, t->slots[j].pid, t->slots[j].addr);
			/* Leave j where it is if its home lies cyclically in (i, j]. */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		t->slots[i] = t->slots[j];
		i = j;
	}
}

int tracker__release(struct tracker *t, uint32_t pid, uint64_t addr, uint64_t before_ts,
		     struct live_alloc *gone)
{
	struct live_alloc *s = lookup(t, pid, addr);

	if (!s)
		return -ENOENT;
	if (s->ts >= before_ts)
		return -EAGAIN;
	*gone = *s;
	remove_at(t, (size_t)(s - t->slots));
	return 0;
}

void tracker__for_each(const struct tracker *t,
		       void (*fn)(const struct live_alloc *a, void *ctx), void *ctx)
{
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].addr)
			fn(&t->slots[i], ctx);
}

size_t tracker__drop_pid(struct tracker *t, uint32_t pid,
			 void (*fn)(const struct live_alloc *a, void *ctx), void *ctx)
{
	size_t n = 0;

	/* Backward shifts move entries to lower slots: re-check slot i. */
	for (size_t i = 0; i <= t->mask;) {
		if (t->slots[i].addr && t->slots[i].pid == pid) {
			if (fn)
				fn(&t->slots[i], ctx);
			remove_at(t, i);
			n++;
			continue;
		}
		i++;
	}
	return n;
}

size_t tracker__count(const struct tracker *t)
{
	return t->count;
}

uint64_t tracker__bytes(const struct tracker *t)
{
	return t->bytes;
}

size_t tracker__memory(const struct tracker *t)
{
	return (t->mask + 1) * sizeof(*t->slots);
}

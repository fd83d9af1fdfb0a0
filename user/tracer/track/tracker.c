// SPDX-License-Identifier: MIT
/*
 * tracker.c - live allocations in an open-addressing hash table with linear
 * probing and backward-shift deletion (no tombstones, so a long run of
 * malloc/free keeps probe sequences short). See tracker.h.
 *
 * Growth is incremental (as Redis's dict rehashes): past 3/4 full, a table
 * twice the size takes every insert, and each alloc or release moves the
 * next MOVE_STEP slots of the old table into it, so no single event pays
 * for copying millions of entries (docs/DESIGN.md, "The consumer never
 * stops"). A slot is moved by inserting its entry in the new table and
 * removing it from the old one with the same backward shift as a free,
 * then looking at the slot again (the shift may have filled it); so the old
 * table's slots [0, moved) stay empty and every lookup there stays right.
 *
 * Not the generic table (htab.h), on purpose: this one is probed at every
 * allocation and free, keeps each 28-byte entry inline (htab would add a
 * pointer and an allocation per entry, and an indirect call per probe),
 * and is measured by bench/ and test_tracker's 10 million entries.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tracker.h"

#define MIN_SLOTS 64	/* per process: most hold few */
#define MOVE_STEP 128	/* old slots looked at per alloc or release while growing */

struct table {
	struct live_alloc *slots;	/* NULL: none */
	size_t mask;			/* slots - 1; slots is a power of two */
};

struct tracker {
	struct table cur;	/* every insert goes here */
	struct table old;	/* while growing: the entries not moved yet */
	size_t moved;		/* old's slots [0, moved) are empty */
	size_t released;	/* old's first bytes handed back (madvise) */
	size_t count;		/* in both tables */
	uint64_t bytes;
};

static size_t slot_of(const struct table *tb, uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 20) & tb->mask;
}

/*
 * Big tables are always mmap()ed by malloc (above its largest threshold,
 * 32 MiB): while one is emptied into the next, its moved part is handed
 * back a MiB at a time, so that freeing it at the end unmaps nothing much
 * (a 224 MB table took 50-130 ms to unmap at once on this project's VMs).
 */
#define RELEASE_FROM (32UL << 20)
#define RELEASE_STEP (1UL << 20)

static size_t table_bytes(const struct table *tb)
{
	return (tb->mask + 1) * sizeof(*tb->slots);
}

static int table_init(struct table *tb, size_t slots)
{
	tb->slots = calloc(slots, sizeof(*tb->slots));
	tb->mask = slots - 1;
	return tb->slots ? 0 : -ENOMEM;
}

struct tracker *tracker__new(void)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (t && table_init(&t->cur, MIN_SLOTS)) {
		free(t);
		return NULL;
	}
	return t;
}

void tracker__free(struct tracker *t)
{
	if (!t)
		return;
	free(t->cur.slots);
	free(t->old.slots);
	free(t);
}

static struct live_alloc *table_find(const struct table *tb, uint64_t addr)
{
	if (!tb->slots)
		return NULL;
	for (size_t i = slot_of(tb, addr);; i = (i + 1) & tb->mask) {
		struct live_alloc *s = &tb->slots[i];

		if (!s->addr)
			return NULL;
		if (s->addr == addr)
			return s;
	}
}

static void table_insert(struct table *tb, const struct live_alloc *a)
{
	size_t i = slot_of(tb, a->addr);

	while (tb->slots[i].addr)
		i = (i + 1) & tb->mask;
	tb->slots[i] = *a;
}

/* Empty slot @i, shifting back the entries of its probe run. */
static void table_remove(struct table *tb, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		tb->slots[i].addr = 0;
		do {
			j = (j + 1) & tb->mask;
			if (!tb->slots[j].addr)
				return;
			home = slot_of(tb, tb->slots[j].addr);
			/* Leave j where it is if its home lies cyclically in (i, j]. */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		tb->slots[i] = tb->slots[j];
		i = j;
	}
}

/*
 * The whole pages of a big old table below slot @t->moved, empty for good
 * (nothing is inserted there, lookups stop at their empty slots), handed
 * back: they read as zeros, empty slots, if touched again.
 */
static void release_moved(struct tracker *t)
{
	uintptr_t start = (uintptr_t)t->old.slots + t->released;
	uintptr_t end = ((uintptr_t)&t->old.slots[t->moved]) & ~(uintptr_t)(RELEASE_STEP - 1);

	start = (start + RELEASE_STEP - 1) & ~(uintptr_t)(RELEASE_STEP - 1);
	if (end > start && !madvise((void *)start, end - start, MADV_DONTNEED))
		t->released = end - (uintptr_t)t->old.slots;
}

/* Move up to @budget old slots into the new table; free it once empty. */
static void move_some(struct tracker *t, size_t budget)
{
	while (t->old.slots && budget--) {
		struct live_alloc *s = &t->old.slots[t->moved];

		if (s->addr) {
			table_insert(&t->cur, s);
			table_remove(&t->old, t->moved);	/* slot moved again next */
		} else if (++t->moved > t->old.mask) {
			free(t->old.slots);
			t->old.slots = NULL;
		} else if (table_bytes(&t->old) >= RELEASE_FROM &&
			   (t->moved * sizeof(*s)) % RELEASE_STEP < sizeof(*s)) {
			release_moved(t);
		}
	}
}

/* Start growing: a table twice the size takes the inserts from now on. */
static int grow(struct tracker *t)
{
	struct table bigger;

	/* Never reached in practice: moving ends long before the next growth. */
	move_some(t, SIZE_MAX);
	if (table_init(&bigger, (t->cur.mask + 1) * 2))
		return -ENOMEM;
	t->old = t->cur;
	t->cur = bigger;
	t->moved = 0;
	t->released = 0;
	return 0;
}

/* @addr's entry and the table it is in (*@in), or NULL. */
static struct live_alloc *find(struct tracker *t, uint64_t addr, struct table **in)
{
	struct live_alloc *s = table_find(&t->cur, addr);

	*in = &t->cur;
	if (!s && t->old.slots) {
		s = table_find(&t->old, addr);
		*in = &t->old;
	}
	return s;
}

void tracker__prefetch(const struct tracker *t, uint64_t addr)
{
	if (t->cur.slots)
		__builtin_prefetch(&t->cur.slots[slot_of(&t->cur, addr)], 1);
}

int tracker__alloc(struct tracker *t, const struct live_alloc *a, struct live_alloc *replaced,
		   int *was_replaced)
{
	struct table *in;
	struct live_alloc *s = find(t, a->addr, &in);

	*was_replaced = 0;
	if (s) {
		*replaced = *s;
		*was_replaced = 1;
		t->bytes += (uint64_t)a->size - (uint64_t)s->size;
		*s = *a;
	} else {
		if ((t->count + 1) * 4 > (t->cur.mask + 1) * 3 && grow(t))
			return -ENOMEM;
		table_insert(&t->cur, a);
		t->count++;
		t->bytes += (uint64_t)a->size;
	}
	move_some(t, MOVE_STEP);
	return 0;
}

int tracker__release(struct tracker *t, uint64_t addr, uint64_t before_seq,
		     struct live_alloc *gone)
{
	struct table *in;
	struct live_alloc *s = find(t, addr, &in);

	if (!s)
		return -ENOENT;
	if (s->seq >= before_seq)
		return -EAGAIN;
	*gone = *s;
	t->count--;
	t->bytes -= (uint64_t)s->size;
	table_remove(in, (size_t)(s - in->slots));
	move_some(t, MOVE_STEP);
	return 0;
}

void tracker__for_each(const struct tracker *t,
		       void (*fn)(const struct live_alloc *a, void *ctx), void *ctx)
{
	for (size_t i = 0; i <= t->cur.mask; i++)
		if (t->cur.slots[i].addr)
			fn(&t->cur.slots[i], ctx);
	for (size_t i = t->moved; t->old.slots && i <= t->old.mask; i++)
		if (t->old.slots[i].addr)
			fn(&t->old.slots[i], ctx);
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
	return (t->cur.mask + 1 + (t->old.slots ? t->old.mask + 1 : 0)) * sizeof(*t->cur.slots);
}

bool tracker__growing(const struct tracker *t)
{
	return t->old.slots != NULL;
}

// SPDX-License-Identifier: MIT
/*
 * acct.c - whole-run accounting of one process (see acct.h). Called on
 * every allocation and free after the live table: a stack's 8 bytes
 * read, changed and written back in its node, one look in the
 * snapshots (empty while the heap grows), one thread lookup (cached for
 * runs of events from the same thread).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "acct.h"
#include "htab.h"

struct acct_thread {
	uint64_t last_addr;	/* its last allocation, 0 once freed */
};

/* A stack's counts past what its node holds; at the peak, when its snapshot says so. */
struct acct_wide {
	uint64_t allocs, alloc_bytes, frees, temporary, live_count, live_bytes;
	uint64_t peak_count, peak_bytes;
};

/*
 * A stack's live values at the peak, taken at its first change since:
 * its blocks (to 1022) and bytes (to 4 MiB - 1) in a word; SNAP_WIDE:
 * they are its whole counts' (a stack past them is past its node's
 * counts: its counts are whole).
 */
struct acct_snap {
	uint32_t id1;		/* the stack's id + 1; 0: an empty slot */
	uint32_t v;		/* count << SNAP_BYTES_BITS | bytes, or SNAP_WIDE */
};

#define SNAP_BYTES_BITS	22
#define SNAP_BYTES_MASK	((1u << SNAP_BYTES_BITS) - 1)
#define SNAP_COUNT_MAX	0x3feu
#define SNAP_WIDE	UINT32_MAX
#define SNAP_MIN	16u	/* the table's least slots */

/*
 * The payload, a word of 64 bits: calls (to 255), frees (255), temporary
 * allocations (127), bytes asked for (to 4 MiB - 1) and live (64 KiB -
 * 1), the marks; wide, its low 32 bits are the index of its whole
 * counts. clang++ -O2 on templates.cpp: 4,073 of 229,919 stacks past
 * them at some time (1,182 past the 12 bytes' that were: calls and frees
 * to 1023, temporary to 511, bytes to 4 GiB): 4 bytes less a stack, 0.9
 * more in whole counts.
 */
struct small {
	uint64_t v;
};

#define ALLOCS_SHIFT	0
#define ALLOCS_BITS	8
#define FREES_SHIFT	8
#define FREES_BITS	8
#define TEMP_SHIFT	16
#define TEMP_BITS	7
#define ASKED_SHIFT	23
#define ASKED_BITS	22
#define LIVE_SHIFT	45
#define LIVE_BITS	16
#define WIDE		(1ULL << 61)
#define DIRTY		(1ULL << 62)	/* changed since its record was written */
#define APART		(1ULL << 63)	/* written with at-peak values apart from
					 * its live ones */
#define FIELD(v, f)	((v) >> f##_SHIFT & ((1ULL << f##_BITS) - 1))
#define FITS(x, f)	((x) < (1ULL << f##_BITS))
#define WIDE_INDEX(v)	((uint32_t)(v))
/* Changes one event makes at most: a realloc's old block, a replaced one, the new one. */
#define RESERVE		3

_Static_assert(sizeof(struct small) == STACK_TREE_PAYLOAD, "a stack's counts fill its payload");
_Static_assert((1u << ALLOCS_BITS) - 1 <= SNAP_COUNT_MAX && (1u << LIVE_BITS) - 1 <= SNAP_BYTES_MASK,
	       "live values its node holds fit a snapshot: only a wide stack's are SNAP_WIDE");

int acct__init(struct acct *a, struct stack_tree *tree)
{
	*a = (struct acct){ .peak_gen = 1, .written_gen = 1, .tree = tree };
	a->threads = htab__new(16, NULL, NULL);
	return a->threads ? 0 : -ENOMEM;
}

void acct__fini(struct acct *a)
{
	struct acct_thread *th;
	size_t pos = 0;

	while (a->threads && (th = htab__next(a->threads, &pos, NULL)))
		free(th);
	htab__free(a->threads);
	a->threads = NULL;
	free(a->wide);
	free(a->snaps);
	a->wide = NULL;
	a->snaps = NULL;
	a->nwide = a->wide_cap = a->nsnaps = a->snaps_cap = 0;
}

static void load(const struct acct *a, uint32_t id, struct small *s)
{
	memcpy(s, stack_tree__payload(a->tree, id), sizeof(*s));
}

static void store(struct acct *a, uint32_t id, const struct small *s)
{
	memcpy(stack_tree__payload(a->tree, id), s, sizeof(*s));
}

/* Stack @id's counts whole (at-peak values apart), its marks in *@s. */
static void get(const struct acct *a, uint32_t id, struct small *s, struct acct_wide *w)
{
	load(a, id, s);
	if (s->v & WIDE) {
		*w = a->wide[WIDE_INDEX(s->v)];
		return;
	}
	*w = (struct acct_wide){
		.allocs = FIELD(s->v, ALLOCS), .alloc_bytes = FIELD(s->v, ASKED),
		.frees = FIELD(s->v, FREES), .temporary = FIELD(s->v, TEMP),
		.live_bytes = FIELD(s->v, LIVE),
	};
	w->live_count = w->allocs - w->frees;
}

/* Back into the node, or the whole table (reserved) once past the node's. */
static void put(struct acct *a, uint32_t id, struct small *s, const struct acct_wide *w)
{
	if (!(s->v & WIDE) && (!FITS(w->allocs, ALLOCS) || !FITS(w->frees, FREES) ||
			       !FITS(w->temporary, TEMP) || !FITS(w->alloc_bytes, ASKED) ||
			       !FITS(w->live_bytes, LIVE) ||
			       w->live_count != w->allocs - w->frees))
		s->v = (s->v & (DIRTY | APART)) | WIDE | a->nwide++;
	if (s->v & WIDE)
		a->wide[WIDE_INDEX(s->v)] = *w;
	else
		s->v = (s->v & (DIRTY | APART)) | w->allocs << ALLOCS_SHIFT |
		       w->frees << FREES_SHIFT | w->temporary << TEMP_SHIFT |
		       w->alloc_bytes << ASKED_SHIFT | w->live_bytes << LIVE_SHIFT;
	store(a, id, s);
}

/*
 * --- the snapshots: open addressing, linear probing, any number of
 * slots (Lemire's multiply-shift puts a hash in range), at most 4/5
 * full, grown by half; emptied at a new peak, and made smaller there
 * when a quarter of it was used, so that emptying costs what the
 * snapshots it held did.
 */

static inline uint32_t snap_home(uint32_t id, uint32_t cap)
{
	return (uint32_t)(((htab_hash2(id, 0) >> 32) * cap) >> 32);
}

static const struct acct_snap *snap_find(const struct acct *a, uint32_t id)
{
	if (!a->nsnaps)
		return NULL;
	for (uint32_t i = snap_home(id, a->snaps_cap);; i = i + 1 == a->snaps_cap ? 0 : i + 1) {
		const struct acct_snap *s = &a->snaps[i];

		if (!s->id1)
			return NULL;
		if (s->id1 == id + 1)
			return s;
	}
}

static void snap_put(struct acct_snap *v, uint32_t cap, const struct acct_snap *e)
{
	uint32_t i = snap_home(e->id1 - 1, cap);

	while (v[i].id1)
		i = i + 1 == cap ? 0 : i + 1;
	v[i] = *e;
}

/* Slots for @n snapshots and an event's changes: the least grown from SNAP_MIN. */
static uint32_t snap_cap_for(uint32_t n)
{
	uint32_t cap = SNAP_MIN;

	while ((uint64_t)(n + RESERVE) * 5 > (uint64_t)cap * 4)
		cap += cap / 2 + 1;
	return cap;
}

/* Every stack's live values are its at-peak ones now: no snapshot holds. */
static void snaps_empty(struct acct *a)
{
	uint32_t cap = snap_cap_for(a->nsnaps);
	struct acct_snap *v;

	if (!a->nsnaps)
		return;		/* empty already */
	v = (uint64_t)cap * 4 <= a->snaps_cap ? calloc(cap, sizeof(*v)) : NULL;
	if (v) {
		free(a->snaps);
		a->snaps = v;
		a->snaps_cap = cap;
	} else {
		memset(a->snaps, 0, (size_t)a->snaps_cap * sizeof(*a->snaps));
	}
	a->nsnaps = 0;
}

int acct__reserve(struct acct *a)
{
	if (a->nwide + RESERVE > a->wide_cap) {
		uint32_t cap = a->wide_cap ? a->wide_cap + a->wide_cap / 2 : 16;
		struct acct_wide *w = realloc(a->wide, cap * sizeof(*w));

		if (!w)
			return -ENOMEM;
		a->wide = w;
		a->wide_cap = cap;
	}
	if ((uint64_t)(a->nsnaps + RESERVE) * 5 > (uint64_t)a->snaps_cap * 4) {
		uint32_t cap = a->snaps_cap ? a->snaps_cap + a->snaps_cap / 2 + 1 : SNAP_MIN;
		struct acct_snap *v = calloc(cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (uint32_t i = 0; i < a->snaps_cap; i++)
			if (a->snaps[i].id1)
				snap_put(v, cap, &a->snaps[i]);
		free(a->snaps);
		a->snaps = v;
		a->snaps_cap = cap;
	}
	return 0;
}

/* @tid's entry, made if @create; NULL if not there (or no memory). */
static struct acct_thread *thread_of(struct acct *a, uint32_t tid, bool create)
{
	uint64_t h = htab_hash2(tid, 0);
	struct acct_thread *th;

	if (a->last && a->last_tid == tid)
		return a->last;
	th = htab__find(a->threads, h, tid);
	if (!th && create) {
		th = calloc(1, sizeof(*th));
		if (th && htab__add(a->threads, h, tid, th)) {
			free(th);
			th = NULL;
		}
	}
	if (th) {
		a->last = th;
		a->last_tid = tid;
	}
	return th;
}

/* Before stack @id's live values change: keep them if they are the peak's. */
static void touch(struct acct *a, uint32_t id, struct small *s, struct acct_wide *w)
{
	if (!snap_find(a, id)) {
		struct acct_snap e = { id + 1, SNAP_WIDE };

		if (w->live_count <= SNAP_COUNT_MAX && w->live_bytes <= SNAP_BYTES_MASK) {
			e.v = (uint32_t)w->live_count << SNAP_BYTES_BITS | (uint32_t)w->live_bytes;
		} else {
			/* Only whole counts hold such values: kept there (put() writes them). */
			w->peak_count = w->live_count;
			w->peak_bytes = w->live_bytes;
		}
		snap_put(a->snaps, a->snaps_cap, &e);
		a->nsnaps++;
	}
	s->v |= DIRTY;
	a->dirty = true;
}

bool acct__alloc(struct acct *a, uint32_t id, uint32_t tid, uint64_t addr, uint64_t size,
		 uint64_t live_count, uint64_t live_bytes)
{
	struct acct_thread *th = thread_of(a, tid, true);
	struct acct_wide w;
	struct small s;

	get(a, id, &s, &w);
	touch(a, id, &s, &w);
	w.live_count++;
	w.live_bytes += size;
	w.allocs++;
	w.alloc_bytes += size;
	put(a, id, &s, &w);
	a->allocs++;
	a->alloc_bytes += size;
	if (th)
		th->last_addr = addr;
	if (live_bytes <= a->peak_bytes)
		return false;
	a->peak_bytes = live_bytes;
	a->peak_count = live_count;
	a->peak_gen++;
	snaps_empty(a);
	return true;
}

void acct__peak_time(struct acct *a, uint64_t ts_ns)
{
	a->peak_ns = ts_ns;
}

void acct__release(struct acct *a, uint32_t id, uint32_t tid, uint64_t addr, uint64_t size,
		   bool freed)
{
	struct acct_thread *th;
	struct acct_wide w;
	struct small s;

	get(a, id, &s, &w);
	touch(a, id, &s, &w);
	w.live_count--;
	w.live_bytes -= size;
	if (freed) {
		w.frees++;
		a->frees++;
		th = thread_of(a, tid, false);
		if (th && th->last_addr == addr) {
			w.temporary++;
			a->temporary++;
			th->last_addr = 0;
		}
	}
	put(a, id, &s, &w);
}

void acct__counts(const struct acct *a, uint32_t id, struct acct_counts *c)
{
	const struct acct_snap *snap = snap_find(a, id);
	struct acct_wide w;
	struct small s;

	get(a, id, &s, &w);
	*c = (struct acct_counts){
		.allocs = w.allocs, .alloc_bytes = w.alloc_bytes, .frees = w.frees,
		.temporary = w.temporary, .live_count = w.live_count,
		.live_bytes = w.live_bytes, .peak_count = w.live_count,
		.peak_bytes = w.live_bytes,
	};
	if (snap && snap->v == SNAP_WIDE) {
		c->peak_count = w.peak_count;
		c->peak_bytes = w.peak_bytes;
	} else if (snap) {
		c->peak_count = snap->v >> SNAP_BYTES_BITS;
		c->peak_bytes = snap->v & SNAP_BYTES_MASK;
	}
}

bool acct__changed(const struct acct *a, uint32_t id)
{
	struct small s;

	load(a, id, &s);
	/*
	 * Not changed since written, but written with at-peak values apart
	 * from its live ones: a new peak since makes those its at-peak ones.
	 */
	return (s.v & DIRTY) || ((s.v & APART) && a->peak_gen != a->written_gen);
}

void acct__written(struct acct *a, uint32_t id)
{
	const struct acct_snap *snap = snap_find(a, id);
	struct acct_wide w;
	struct small s;

	get(a, id, &s, &w);
	s.v &= ~(DIRTY | APART);
	if (snap && (snap->v == SNAP_WIDE ? w.peak_count != w.live_count ||
					    w.peak_bytes != w.live_bytes :
			     snap->v >> SNAP_BYTES_BITS != w.live_count ||
			     (snap->v & SNAP_BYTES_MASK) != w.live_bytes))
		s.v |= APART;
	store(a, id, &s);
}

void acct__all_written(struct acct *a)
{
	a->written_gen = a->peak_gen;
	a->dirty = false;
}

size_t acct__memory(const struct acct *a)
{
	return (size_t)a->wide_cap * sizeof(*a->wide) + acct__snap_memory(a);
}

size_t acct__snap_memory(const struct acct *a)
{
	return (size_t)a->snaps_cap * sizeof(*a->snaps);
}

uint32_t acct__wide(const struct acct *a)
{
	return a->nwide;
}

uint32_t acct__snapshots(const struct acct *a)
{
	return a->nsnaps;
}

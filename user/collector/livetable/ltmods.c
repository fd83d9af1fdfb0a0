// SPDX-License-Identifier: MIT
/*
 * ltmods.c - the live table's module records (see ltmods.h). The records
 * are appended under one lock, in the modules' region (livetable.h's
 * offsets; a record that would cross its segment's end leaves
 * LT_MOD_PAD there and goes at the next segment's start, made if it is
 * not). The private list of what is recorded grows by mremap(2) (no
 * malloc: this is the allocator).
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "ltwrite.h"
#include "ltmods.h"
#include "modmaps.h"

struct known {
	uint64_t start, end, off;
	struct lt_module *rec;
	bool seen;
};

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long mod_adds = ~0ull, mod_subs = ~0ull;
static struct known *known;		/* private, under mod_lock */
static unsigned int nknown, known_cap;

/* Room for one more in known[]; false without memory. */
static bool known_room(void)
{
	size_t old = known_cap * sizeof(*known), len = old ? 2 * old : 4096;
	void *p;

	if (nknown < known_cap)
		return true;
	p = old ? mremap(known, old, len, MREMAP_MAYMOVE) :
		  mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	known = p;
	known_cap = (unsigned int)(len / sizeof(*known));
	return true;
}

/*
 * Room for a record of @len bytes: its offset, at a later segment's start
 * if it would cross its segment's end (the rest of that one padding); or
 * UINT64_MAX.
 */
static uint64_t mod_room(uint32_t len)
{
	uint64_t used = lt.h->mod_used;
	unsigned int k = lt_seg_of(used, LT_MOD_SHIFT);

	while (used + len > lt_seg_start(k + 1, LT_MOD_SHIFT)) {
		if (lt_made(LT_MOD, k))
			__atomic_store_n((uint32_t *)lt_at(LT_MOD, LT_MOD_SHIFT, used), LT_MOD_PAD,
					 __ATOMIC_RELEASE);
		used = lt_seg_start(++k, LT_MOD_SHIFT);
	}
	if (!lt_made(LT_MOD, k) && livetable__grow(LT_MOD, k))
		return UINT64_MAX;
	return used;
}

static void mod_append(const struct modmap_seg *seg)
{
	size_t plen = strlen(seg->path) + 1;
	uint32_t len = (uint32_t)((sizeof(struct lt_module) + plen + 7) & ~(size_t)7);
	uint64_t at;
	struct lt_module *m;

	if (!known_room() || (at = mod_room(len)) == UINT64_MAX) {
		__atomic_fetch_add(&lt.h->lost_modules, 1, __ATOMIC_RELAXED);
		return;
	}
	m = (struct lt_module *)lt_at(LT_MOD, LT_MOD_SHIFT, at);
	m->gone = 0;
	m->start = seg->start;
	m->end = seg->end;
	m->off = seg->off;
	memcpy(m->build_id, seg->build_id, sizeof(m->build_id));
	memcpy(m->path, seg->path, plen);
	__atomic_store_n(&m->commit, len, __ATOMIC_RELEASE);
	__atomic_store_n(&lt.h->mod_used, at + len, __ATOMIC_RELEASE);
	known[nknown++] = (struct known){ seg->start, seg->end, seg->off, m, true };
}

static int mod_seen(void *arg, const struct modmap_seg *seg)
{
	unsigned int k;

	(void)arg;
	for (k = 0; k < nknown; k++)
		if (known[k].start == seg->start && known[k].end == seg->end &&
		    known[k].off == seg->off && !known[k].rec->gone &&
		    !strcmp(known[k].rec->path, seg->path))
			break;
	if (k < nknown)
		known[k].seen = true;
	else
		mod_append(seg);
	return 0;
}

static int mod_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1;	/* the first object is enough */
}

void ltmods__refresh(void)
{
	unsigned long long c[2] = { 0, 0 };

	dl_iterate_phdr(mod_counts, c);
	if (c[0] == __atomic_load_n(&mod_adds, __ATOMIC_RELAXED) &&
	    c[1] == __atomic_load_n(&mod_subs, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&mod_lock);
	for (unsigned int k = 0; k < nknown; k++)
		known[k].seen = false;
	modmaps__each(mod_seen, NULL);
	for (unsigned int k = 0; k < nknown; k++)
		if (!known[k].seen)
			__atomic_store_n(&known[k].rec->gone, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&mod_adds, c[0], __ATOMIC_RELAXED);
	__atomic_store_n(&mod_subs, c[1], __ATOMIC_RELAXED);
	pthread_mutex_unlock(&mod_lock);
}

int ltmods__init(void)
{
	return known_room() ? 0 : -ENOMEM;
}

void ltmods__forked(void)
{
	pthread_mutex_init(&mod_lock, NULL);
}

unsigned int ltmods__count(void)
{
	return nknown;
}

void ltmods__gone(uint64_t *bits, unsigned int n)
{
	memset(bits, 0, (n + 63) / 64 * 8);
	for (unsigned int k = 0; k < nknown && k < n; k++)
		if (known[k].rec->gone)
			bits[k / 64] |= 1ull << (k % 64);
}

void ltmods__restore_gone(const uint64_t *bits, unsigned int n)
{
	for (unsigned int k = 0; k < nknown && k < n; k++)
		known[k].rec->gone = !!(bits[k / 64] & (1ull << (k % 64)));
}

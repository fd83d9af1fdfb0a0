// SPDX-License-Identifier: MIT
/*
 * ltstacks.c - the live table's stacks and modules (see ltstacks.h).
 *
 * Stacks: raw frames, appended once (a reader encodes them: the codec
 * costs more than unwinding, and a dump encodes a stack once for all its
 * blocks), found again through private hash chains (2^18 heads; each
 * record's next links the chain). Interning is lock-free: append, commit
 * (release), then a compare-and-exchange into the chain's head.
 *
 * Modules: the loader's counts of loads and unloads (dl_iterate_phdr's
 * dlpi_adds, dlpi_subs) are read when a new stack is interned; if they
 * moved, every executable segment not recorded yet is appended, and a
 * recorded one no longer loaded is marked gone (a dump leaves it out:
 * another module may be mapped at its addresses).
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "livetable.h"
#include "ltstacks.h"
#include "modmaps.h"

#define NBUCKETS (1u << 18)
#define MAX_KNOWN 4096

static uint32_t *buckets;		/* private: each chain's newest id */

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long mod_adds = ~0ull, mod_subs = ~0ull;
static struct known {
	uint64_t start, end, off;
	struct lt_module *rec;
	bool seen;
} known[MAX_KNOWN];
static int nknown;

/* --- modules -------------------------------------------------------------- */

static void mod_append(const struct modmap_seg *seg)
{
	size_t plen = strlen(seg->path) + 1;
	uint32_t len = (uint32_t)((sizeof(struct lt_module) + plen + 7) & ~(size_t)7);
	uint64_t used = __atomic_load_n(&lt.h->mod_used, __ATOMIC_RELAXED);
	struct lt_module *m;

	if (nknown == MAX_KNOWN || used + len > lt.h->mod_cap) {
		__atomic_fetch_add(&lt.h->lost_modules, 1, __ATOMIC_RELAXED);
		return;
	}
	m = (struct lt_module *)(lt.base + lt.h->mod_off + used);
	m->gone = 0;
	m->start = seg->start;
	m->end = seg->end;
	m->off = seg->off;
	memcpy(m->build_id, seg->build_id, sizeof(m->build_id));
	memcpy(m->path, seg->path, plen);
	__atomic_store_n(&m->commit, len, __ATOMIC_RELEASE);
	__atomic_store_n(&lt.h->mod_used, used + len, __ATOMIC_RELEASE);
	known[nknown++] = (struct known){ seg->start, seg->end, seg->off, m, true };
}

static int mod_seen(void *arg, const struct modmap_seg *seg)
{
	int k;

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

/* The modules loaded since the last look recorded, the unloaded marked gone. */
static void modules_refresh(void)
{
	unsigned long long c[2] = { 0, 0 };

	dl_iterate_phdr(mod_counts, c);
	if (c[0] == __atomic_load_n(&mod_adds, __ATOMIC_RELAXED) &&
	    c[1] == __atomic_load_n(&mod_subs, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&mod_lock);
	for (int k = 0; k < nknown; k++)
		known[k].seen = false;
	modmaps__each(mod_seen, NULL);
	for (int k = 0; k < nknown; k++)
		if (!known[k].seen)
			__atomic_store_n(&known[k].rec->gone, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&mod_adds, c[0], __ATOMIC_RELAXED);
	__atomic_store_n(&mod_subs, c[1], __ATOMIC_RELAXED);
	pthread_mutex_unlock(&mod_lock);
}

void ltstacks__forked(void)
{
	pthread_mutex_init(&mod_lock, NULL);
}

void ltstacks__gone(uint32_t *bits, unsigned int n)
{
	memset(bits, 0, n / 8);
	for (int k = 0; k < nknown && (unsigned int)k < n; k++)
		if (known[k].rec->gone)
			bits[k / 32] |= 1u << (k % 32);
}

void ltstacks__restore_gone(const uint32_t *bits, unsigned int n)
{
	for (int k = 0; k < nknown && (unsigned int)k < n; k++)
		known[k].rec->gone = !!(bits[k / 32] & (1u << (k % 32)));
}

int ltstacks__init(void)
{
	buckets = mmap(NULL, NBUCKETS * sizeof(*buckets), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buckets == MAP_FAILED) {
		buckets = NULL;
		return -ENOMEM;
	}
	modules_refresh();
	return 0;
}

/* --- stacks --------------------------------------------------------------- */

static inline struct lt_stack *stack_at(uint32_t id)
{
	return (struct lt_stack *)(lt.base + lt.h->stk_off + (uint64_t)id * 8);
}

static uint32_t hash_frames(const uint64_t *f, uint32_t depth, uint32_t cut)
{
	uint64_t h = depth | (uint64_t)cut << 16;

	for (uint32_t i = 0; i < depth; i++)
		h = (h ^ f[i]) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* In the chain from @id up to @stop: the stack equal to @f, or 0. */
static uint32_t chain_find(uint32_t id, uint32_t stop, uint32_t hash, uint32_t commit,
			   const uint64_t *f, uint32_t depth)
{
	for (; id && id != stop; id = __atomic_load_n(&stack_at(id)->next, __ATOMIC_ACQUIRE)) {
		const struct lt_stack *s = stack_at(id);

		if (s->hash == hash && __atomic_load_n(&s->commit, __ATOMIC_RELAXED) == commit &&
		    !memcmp(s->frames, f, depth * sizeof(*f)))
			return id;
	}
	return 0;
}

uint32_t ltstacks__find(const uint64_t *f, uint32_t depth, uint32_t cut)
{
	uint32_t hash = hash_frames(f, depth, cut), commit = LT_STK_OK | cut << 16 | depth;

	return chain_find(__atomic_load_n(&buckets[hash & (NBUCKETS - 1)], __ATOMIC_ACQUIRE), 0,
			  hash, commit, f, depth);
}

uint64_t *ltstacks__reserve(uint32_t n, uint32_t *id)
{
	uint64_t len = sizeof(struct lt_stack) + n * sizeof(uint64_t), off;

	if (n > LT_MAX_DEPTH)
		return NULL;
	off = __atomic_fetch_add(&lt.h->stk_used, len, __ATOMIC_RELAXED);
	if (off + len > lt.h->stk_cap || off / 8 > UINT32_MAX) {
		__atomic_fetch_add(&lt.h->lost_stacks, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	*id = (uint32_t)(off / 8);
	return stack_at(*id)->frames;
}

void ltstacks__commit(uint32_t id, uint32_t n)
{
	__atomic_store_n(&stack_at(id)->commit, LT_STK_OK | n, __ATOMIC_RELEASE);
}

uint32_t ltstacks__intern(const uint64_t *f, uint32_t depth, uint32_t cut)
{
	uint32_t hash = hash_frames(f, depth, cut), commit = LT_STK_OK | cut << 16 | depth;
	uint32_t *b = &buckets[hash & (NBUCKETS - 1)];
	uint32_t head = __atomic_load_n(b, __ATOMIC_ACQUIRE), id;
	uint64_t len = sizeof(struct lt_stack) + depth * sizeof(*f), off;
	struct lt_stack *s;

	id = chain_find(head, 0, hash, commit, f, depth);
	if (id)
		return id;
	lt_section_enter();
	/* Every module its frames may be in, recorded before an entry names it. */
	modules_refresh();
	off = __atomic_fetch_add(&lt.h->stk_used, len, __ATOMIC_RELAXED);
	if (off + len > lt.h->stk_cap || off / 8 > UINT32_MAX) {
		lt_section_exit();
		__atomic_fetch_add(&lt.h->lost_stacks, 1, __ATOMIC_RELAXED);
		return 0;
	}
	id = (uint32_t)(off / 8);
	s = stack_at(id);
	s->hash = hash;
	memcpy(s->frames, f, depth * sizeof(*f));
	__atomic_store_n(&s->commit, commit, __ATOMIC_RELEASE);
	for (;;) {
		uint32_t seen = head, dup;

		__atomic_store_n(&s->next, head, __ATOMIC_RELAXED);
		if (__atomic_compare_exchange_n(b, &head, id, true, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			break;
		/* Another thread put a stack in first: maybe this one (ours stays unused). */
		dup = chain_find(head, seen, hash, commit, f, depth);
		if (dup) {
			id = dup;
			break;
		}
	}
	lt_section_exit();
	return id;
}

// SPDX-License-Identifier: MIT
/*
 * ltread.c - the reader's side of livetable.h's protocol (see
 * livedump.h): an entry read whole between two loads of its sequence
 * count, the realloc link rule, and bounds on everything else. The table
 * is written by a process that may be broken or hostile, or may be
 * changing it right now: every offset, count and length read from it is
 * checked against the mapping before it is used, and each is read once
 * (heapprofd's rule for the shared ring it reads: copy, then check).
 * Async-signal-safe.
 */
#include <errno.h>
#include <string.h>

#include "heapsnoop/livedump.h"

#define RETRIES 64

#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

_Static_assert(sizeof(struct lt_entry) == 32, "an entry is 32 bytes");
_Static_assert(sizeof(struct lt_header) <= LT_HDR_SIZE, "the header fits its page");

/* [@off, @off + @len) inside @size, overflow-safe. */
static bool inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

int lt_view__open(struct lt_view *v, const void *base, uint64_t size)
{
	const struct lt_header *h = base;
	uint64_t mo, mc, so, sc, eo, ec;

	memset(v, 0, sizeof(*v));
	if (!base || size < LT_HDR_SIZE || LOAD(&h->magic) != LT_MAGIC ||
	    LOAD(&h->version) != LT_VERSION || LOAD(&h->entry_size) != sizeof(struct lt_entry))
		return -EINVAL;
	/* The region fields never change after creation; read each once. */
	mo = LOAD(&h->mod_off);
	mc = LOAD(&h->mod_cap);
	so = LOAD(&h->stk_off);
	sc = LOAD(&h->stk_cap);
	eo = LOAD(&h->ent_off);
	ec = LOAD(&h->ent_cap);
	if (mo < LT_HDR_SIZE || so < LT_HDR_SIZE || eo < LT_HDR_SIZE || !inside(mo, mc, size) ||
	    !inside(so, sc, size) || !inside(eo, ec, size) || mo % 8 || so % 8 || eo % 32 ||
	    ec % sizeof(struct lt_entry))
		return -EINVAL;
	v->base = base;
	v->size = size;
	v->h = h;
	v->nslots = ec / sizeof(struct lt_entry);
	return 0;
}

uint64_t lt_view__hwm(const struct lt_view *v)
{
	uint64_t hwm = LOAD_ACQ(&v->h->ent_hwm);

	return hwm < v->nslots ? hwm : v->nslots;
}

static const struct lt_entry *entry_at(const struct lt_view *v, uint64_t slot)
{
	return (const struct lt_entry *)(v->base + v->h->ent_off) + slot;
}

/* Entry @e into *@out if live and read whole; false if free or never still. */
static bool read_entry(const struct lt_entry *e, struct lt_entry *out, struct lt_walk_stats *st)
{
	for (int i = 0; i < RETRIES; i++) {
		uint32_t s1 = LOAD_ACQ(&e->seq), s2;

		if (!(s1 & 1))
			return false;
		out->stack = LOAD(&e->stack);
		out->addr = LOAD(&e->addr);
		out->size = LOAD(&e->size);
		out->tid = LOAD(&e->tid);
		out->link = LOAD(&e->link);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = LOAD(&e->seq);
#ifdef LT_NO_RECHECK
		s2 = s1;	/* test_livetable's control: the walk without its second look */
#endif
		if (s1 == s2) {
			out->seq = s1;
			return true;
		}
		st->retries++;
	}
	st->unstable++;
	return false;
}

/* Stack @id's record, committed and inside the stacks written; or NULL. */
static const struct lt_stack *stack_of(const struct lt_view *v, uint32_t id, uint32_t *commit)
{
	const struct lt_header *h = v->h;
	uint64_t used = LOAD_ACQ(&h->stk_used), off = (uint64_t)id * 8;
	const struct lt_stack *s;
	uint32_t c;

	if (used > h->stk_cap)
		used = h->stk_cap;
	if (!id || !inside(off, sizeof(*s), used))
		return NULL;
	s = (const struct lt_stack *)(v->base + h->stk_off + off);
	c = LOAD_ACQ(&s->commit);
	if (!(c & LT_STK_OK) || LT_STK_DEPTH(c) > LT_MAX_DEPTH ||
	    !inside(off + sizeof(*s), (uint64_t)LT_STK_DEPTH(c) * 8, used))
		return NULL;
	*commit = c;
	return s;
}

int lt_walk(const struct lt_view *v, uint64_t from, uint64_t to, lt_live_fn fn, void *arg,
	    struct lt_walk_stats *st)
{
	uint64_t hwm = lt_view__hwm(v);

	if (!to || to > hwm)
		to = hwm;
	for (uint64_t i = from; i < to; i++) {
		const struct lt_stack *s;
		struct lt_entry e;
		struct lt_live l;
		uint32_t commit = 0;
		int r;

		st->slots++;
		if (!read_entry(entry_at(v, i), &e, st))
			continue;
		if (e.link && e.link - 1 < hwm && e.link - 1 != i) {
			/*
			 * A realloc in flight: while the block it replaces is
			 * live, that one is the block (the call has not
			 * returned); this one is skipped, unless its link was
			 * cleared meanwhile.
			 */
			const struct lt_entry *old = entry_at(v, e.link - 1);

			if ((LOAD_ACQ(&old->seq) & 1) && LOAD_ACQ(&entry_at(v, i)->link) == e.link) {
				st->linked++;
				continue;
			}
		}
		l = (struct lt_live){ .addr = e.addr, .size = e.size, .stack = e.stack, .tid = e.tid };
		s = e.stack ? stack_of(v, e.stack, &commit) : NULL;
		if (s) {
			l.depth = LT_STK_DEPTH(commit);
			l.cut = LT_STK_CUT(commit);
			l.frames = s->frames;
		} else if (e.stack) {
			st->bad_stack++;
			l.stack = 0;
		} else {
			st->no_stack++;
		}
		st->live++;
		r = fn(arg, &l);
		if (r)
			return r;
	}
	return 0;
}

static bool build_id_ok(const char *b)
{
	if (!strcmp(b, "-"))
		return true;
	if (!*b)
		return false;
	for (; *b; b++)
		if (!((*b >= '0' && *b <= '9') || (*b >= 'a' && *b <= 'f')))
			return false;
	return true;
}

int lt_modules(const struct lt_view *v, int (*fn)(void *arg, const struct lt_mod *m), void *arg)
{
	const struct lt_header *h = v->h;
	uint64_t used = LOAD_ACQ(&h->mod_used), off = 0;
	struct lt_mod m;

	if (used > h->mod_cap)
		used = h->mod_cap;
	while (inside(off, sizeof(struct lt_module), used)) {
		const struct lt_module *r = (const struct lt_module *)(v->base + h->mod_off + off);
		uint32_t len = LOAD_ACQ(&r->commit);
		size_t plen;
		int ret;

		if (len < sizeof(*r) + 1 || len % 8 || !inside(off, len, used))
			break;	/* the record being written when the writer stopped */
		off += len;
		if (LOAD(&r->gone))
			continue;
		m.start = LOAD(&r->start);
		m.end = LOAD(&r->end);
		m.off = LOAD(&r->off);
		memcpy(m.build_id, r->build_id, sizeof(m.build_id));
		m.build_id[sizeof(m.build_id) - 1] = '\0';
		plen = len - sizeof(*r) < sizeof(m.path) ? len - sizeof(*r) : sizeof(m.path);
		memcpy(m.path, r->path, plen);
		m.path[plen - 1] = '\0';
		/* A map record's grammar: a range, hex or "-", a path to the line's end. */
		if (m.end <= m.start || !build_id_ok(m.build_id) || strchr(m.path, '\n'))
			continue;
		ret = fn(arg, &m);
		if (ret)
			return ret;
	}
	return 0;
}

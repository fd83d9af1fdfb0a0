// SPDX-License-Identifier: MIT
/*
 * ltread.c - the reader's side of livetable.h's protocol (see
 * livedump.h): an entry read whole between two loads of its sequence
 * count, the realloc link rule, a stack rebuilt from its nodes, and
 * bounds on everything else. The table is written by a process that may
 * be broken or hostile, or may be changing it right now: every offset,
 * count and length read from it is checked against what is mapped before
 * it is used, and each is read once (heapprofd's rule for the shared
 * ring it reads: copy, then check); a node's parent must lie below it,
 * so no chain of them loops, and a join's two chains are chains. Async-signal-safe.
 */
#include <errno.h>
#include <string.h>

#include "heapsnoop/livedump.h"

#define RETRIES 64

#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

_Static_assert(sizeof(struct lt_entry) == 32, "an entry is 32 bytes");
_Static_assert(sizeof(struct lt_header) <= LT_HDR_SIZE, "the header fits its page");
_Static_assert(LT_SEG_MIN % sizeof(struct lt_entry) == 0, "segments hold whole entries");

/* [@off, @off + @len) inside @size, overflow-safe. */
static bool inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

uint32_t lt_view__version(const void *base, uint64_t size)
{
	const struct lt_header *h = base;

	if (!base || size < LT_HDR_SIZE || LOAD(&h->magic) != LT_MAGIC)
		return 0;
	return LOAD(&h->version);
}

uint64_t lt_view__seg_size(const struct lt_view *v, unsigned int r, unsigned int k)
{
	return 1ull << (v->r[r].shift + k);
}

/* Segment @k of region @r, if the header places it in the mapping and it fits there. */
static const char *placed(const struct lt_view *v, unsigned int r, unsigned int k)
{
	uint64_t at = LOAD_ACQ(&v->h->region[r].seg[k]), len = lt_view__seg_size(v, r, k);

	if (at == 0 || at == LT_SEG_OWN || at < LT_HDR_SIZE || at % 4096 ||
	    !inside(at, len, v->size))
		return NULL;
	return v->base + at;
}

int lt_view__open(struct lt_view *v, const void *base, uint64_t size)
{
	const struct lt_header *h = base;
	uint32_t version = lt_view__version(base, size);

	memset(v, 0, sizeof(*v));
	if (!version)
		return -EINVAL;
	if (version != LT_VERSION)
		return -EPROTO;
	if (LOAD(&h->entry_size) != sizeof(struct lt_entry))
		return -EINVAL;
	v->base = base;
	v->size = size;
	v->h = h;
	/* A region's segment size never changes after creation: read once. */
	for (unsigned int r = 0; r < LT_NREGIONS; r++) {
		uint64_t seg0 = LOAD(&h->region[r].seg0);

		if (seg0 < LT_SEG_MIN || seg0 > LT_SEG_MAX || (seg0 & (seg0 - 1))) {
			memset(v, 0, sizeof(*v));
			return -EINVAL;
		}
		v->r[r].shift = (unsigned int)__builtin_ctzll(seg0);
		for (unsigned int k = 0; k < LT_SEGS; k++) {
			uint64_t at = LOAD_ACQ(&h->region[r].seg[k]);

			if (at == 0 || at == LT_SEG_OWN)
				continue;
			v->r[r].seg[k] = placed(v, r, k);
			if (!v->r[r].seg[k]) {
				/* Placed outside the mapping, over the header, or askew: it lies. */
				memset(v, 0, sizeof(*v));
				return -EINVAL;
			}
		}
	}
	return 0;
}

void lt_view__refresh(struct lt_view *v)
{
	for (unsigned int r = 0; v->h && r < LT_NREGIONS; r++)
		for (unsigned int k = 0; k < LT_SEGS; k++)
			if (!v->r[r].seg[k])
				v->r[r].seg[k] = placed(v, r, k);
}

int lt_view__attach(struct lt_view *v, unsigned int r, unsigned int k, const void *p,
		    uint64_t len)
{
	if (r >= LT_NREGIONS || k >= LT_SEGS || !p || len < lt_view__seg_size(v, r, k))
		return -EINVAL;
	if (v->r[r].seg[k])
		return -EEXIST;
	v->r[r].seg[k] = p;
	return 0;
}

unsigned int lt_view__missing(const struct lt_view *v)
{
	unsigned int n = 0;

	for (unsigned int r = 0; v->h && r < LT_NREGIONS; r++)
		for (unsigned int k = 0; k < LT_SEGS; k++)
			n += LOAD_ACQ(&v->h->region[r].seg[k]) && !v->r[r].seg[k];
	return n;
}

/* Region @r's offsets [0, end) that lie in segments held, from the first on. */
static uint64_t held_end(const struct lt_view *v, unsigned int r)
{
	unsigned int k = 0;

	while (k < LT_SEGS && v->r[r].seg[k])
		k++;
	return lt_seg_start(k, v->r[r].shift);
}

/*
 * [@off, @off + @len) of region @r, inside one segment held, as a
 * pointer; NULL if it is not.
 */
static const void *at(const struct lt_view *v, unsigned int r, uint64_t off, uint64_t len)
{
	unsigned int shift = v->r[r].shift, k;
	uint64_t start;

	if (off >= lt_seg_start(LT_SEGS, shift))
		return NULL;
	k = lt_seg_of(off, shift);
	start = lt_seg_start(k, shift);
	if (!v->r[r].seg[k] || !inside(off - start, len, lt_view__seg_size(v, r, k)))
		return NULL;
	return v->r[r].seg[k] + (off - start);
}

uint64_t lt_view__hwm(const struct lt_view *v)
{
	uint64_t hwm = LOAD_ACQ(&v->h->ent_hwm), slots = held_end(v, LT_ENT) / sizeof(struct lt_entry);

	return hwm < slots ? hwm : slots;
}

static const struct lt_entry *entry_at(const struct lt_view *v, uint64_t slot)
{
	return at(v, LT_ENT, slot * sizeof(struct lt_entry), sizeof(struct lt_entry));
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

/* --- stacks ---------------------------------------------------------------- */

/* The stacks' offsets reserved (acquire), at most the region's. */
static uint64_t stk_used(const struct lt_view *v)
{
	uint64_t used = LOAD_ACQ(&v->h->stk_used), max = lt_seg_start(LT_SEGS, v->r[LT_STK].shift);

	return used < max ? used : max;
}

int lt_stack__next(const struct lt_view *v, uint64_t off, struct lt_node *n)
{
	unsigned int shift = v->r[LT_STK].shift;
	const struct lt_stack *s;
	uint64_t used = stk_used(v);
	uint32_t c;

	if (off % 8 || off / 8 > UINT32_MAX || !inside(off, sizeof(*s), used))
		return 0;
	s = at(v, LT_STK, off, sizeof(*s));
	if (!s)
		return 0;
	c = LOAD_ACQ(&s->commit);
	if (!c)
		return 0;	/* being written (or never will be: a writer that died there) */
	n->id = (uint32_t)(off / 8);
	n->commit = c;
	n->parent = LOAD(&s->parent);
	n->words = s->frames;
	if (c == LT_STK_PAD) {
		n->n = 0;
		n->next = lt_seg_start(lt_seg_of(off, shift) + 1, shift);
		return 1;
	}
	n->n = LT_STK_WORDS(c);
	if (!(c & LT_STK_OK) || n->n > LT_MAX_DEPTH ||
	    !at(v, LT_STK, off, sizeof(*s) + (uint64_t)n->n * 8) ||
	    !inside(off, sizeof(*s) + (uint64_t)n->n * 8, used))
		return -EINVAL;
	n->next = off + sizeof(*s) + (uint64_t)n->n * 8;
	return 1;
}

/*
 * The chain of nodes from @id (no JOIN) appended to @out at *@d: each
 * committed, its parent below it, every node but the first with frames,
 * at most LT_MAX_DEPTH in all. *@c0: its first node's commit word.
 */
static int chain_words(const struct lt_view *v, uint32_t id, uint64_t *out, uint32_t *d,
		       uint32_t *c0)
{
	struct lt_node n;

	for (uint32_t node = id, hops = 0; node; node = n.parent, hops++) {
		if (lt_stack__next(v, (uint64_t)node * 8, &n) != 1 || n.commit == LT_STK_PAD ||
		    (n.commit & LT_STK_JOIN) || *d + n.n > LT_MAX_DEPTH || n.parent >= node ||
		    (!n.n && (n.parent || hops)))
			return -EINVAL;
		if (!hops)
			*c0 = n.commit;
		/* Copied one by one: a hostile writer may change them under us. */
		for (uint32_t i = 0; i < n.n; i++)
			out[*d + i] = LOAD(&n.words[i]);
		*d += n.n;
	}
	return id ? 0 : -EINVAL;
}

int lt_stack__words(const struct lt_view *v, uint32_t id, uint64_t *out, uint32_t *depth,
		    uint32_t *cut)
{
	uint32_t d = 0, c0 = 0, c;
	struct lt_node n;
	uint64_t b;

	if (lt_stack__next(v, (uint64_t)id * 8, &n) != 1 || !id)
		return -EINVAL;
	if (n.commit == LT_STK_PAD || !(n.commit & LT_STK_JOIN)) {
		if (chain_words(v, id, out, &d, &c0))
			return -EINVAL;
	} else {
		/* Two chains end to end, both below it. */
		b = n.n == 1 ? LOAD(&n.words[0]) : 0;
		c0 = n.commit;
		if (n.n != 1 || !n.parent || n.parent >= id || !b || b >= id ||
		    chain_words(v, n.parent, out, &d, &c) || chain_words(v, (uint32_t)b, out, &d, &c))
			return -EINVAL;
	}
	*depth = d;
	*cut = LT_STK_CUT(c0);
	return 0;
}

/* --- the walk -------------------------------------------------------------- */

int lt_walk(const struct lt_view *v, uint64_t from, uint64_t to, lt_live_fn fn, void *arg,
	    struct lt_walk_stats *st)
{
	uint64_t hwm = lt_view__hwm(v), words[LT_MAX_DEPTH];
	uint32_t have = 0, have_depth = 0, have_cut = 0;	/* the stack in words[] */

	if (!to || to > hwm)
		to = hwm;
	for (uint64_t i = from; i < to; i++) {
		const struct lt_entry *ep = entry_at(v, i);
		struct lt_entry e;
		struct lt_live l;
		int r;

		st->slots++;
		if (!ep || !read_entry(ep, &e, st))
			continue;
		if (e.link && e.link - 1 < hwm && e.link - 1 != i) {
			/*
			 * A realloc in flight: while the block it replaces is
			 * live, that one is the block (the call has not
			 * returned); this one is skipped, unless its link was
			 * cleared meanwhile.
			 */
			const struct lt_entry *old = entry_at(v, e.link - 1);

			if (old && (LOAD_ACQ(&old->seq) & 1) && LOAD_ACQ(&ep->link) == e.link) {
				st->linked++;
				continue;
			}
		}
		l = (struct lt_live){ .addr = e.addr, .size = e.size, .stack = e.stack, .tid = e.tid };
		if (e.stack && e.stack != have) {
			have = lt_stack__words(v, e.stack, words, &have_depth, &have_cut) ? 0 : e.stack;
		}
		if (e.stack && e.stack == have) {
			l.depth = have_depth;
			l.cut = have_cut;
			l.frames = words;
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

/* --- modules --------------------------------------------------------------- */

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
	unsigned int shift = v->r[LT_MOD].shift;
	uint64_t used = LOAD_ACQ(&h->mod_used), off = 0;
	struct lt_mod m;

	if (used > lt_seg_start(LT_SEGS, shift))
		used = lt_seg_start(LT_SEGS, shift);
	while (inside(off, sizeof(struct lt_module), used)) {
		const struct lt_module *r = at(v, LT_MOD, off, sizeof(struct lt_module));
		uint32_t len;
		size_t plen;
		int ret;

		if (!r) {
			/* Its segment's last bytes, too few for a record: the next segment's start. */
			const uint32_t *pad = at(v, LT_MOD, off, sizeof(uint32_t));

			if (!pad || LOAD_ACQ(pad) != LT_MOD_PAD)
				break;
			off = lt_seg_start(lt_seg_of(off, shift) + 1, shift);
			continue;
		}
		len = LOAD_ACQ(&r->commit);
		if (len == LT_MOD_PAD) {
			off = lt_seg_start(lt_seg_of(off, shift) + 1, shift);
			continue;
		}
		if (len < sizeof(*r) + 1 || len % 8 || !inside(off, len, used) ||
		    !at(v, LT_MOD, off, len))
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

// SPDX-License-Identifier: MIT
/*
 * ltstacks.c - the live table's stacks (see ltstacks.h).
 *
 * A stack of d frames is m = ceil(d / LT_NODE_FRAMES) nodes (one for
 * none): node j (0 the outermost) holds frames [d - (j + 1) * 8, d - j * 8)
 * (the innermost node fewer), its parent node j - 1, the last one the
 * stack's cut bits. Each node's key is the hash of the frames from the
 * stack's outer end to its own (the cut bits too, for a node that has
 * them): the private index (ltindex.c) finds a node by the frames it
 * stands for. A stack seen before: its innermost node's key, one probe,
 * its nodes compared with its frames, inner to outer. A new one: its
 * nodes from the outer end, each probed with its parent known (compared
 * alone), until one is not there; from that one on, under the lock,
 * looked for again and added: appended, committed (release), then put in
 * the index. Raw frames, as before the tree: a reader encodes them (the
 * codec costs more than unwinding, and a dump encodes a stack once for
 * all its blocks).
 *
 * An interpreter's stack (its native frames, then its Python or Lua
 * words) is two such chains, each shared with the stacks that share it,
 * and a JOIN node of one word under the native chain naming the words'
 * chain: its key mixes the two chains' keys and the cut bits, so it too
 * is one probe when seen before. One chain for the whole would copy every
 * native frame under each new innermost Python frame (an import-heavy
 * Python run: 808 bytes a stack, 56 with JOINs).
 *
 * Room: a node is reserved by moving stk_used on (compare-and-exchange);
 * one that would cross its segment's end leaves LT_STK_PAD there and is
 * reserved at the next segment's start (made if need be:
 * livetable__grow()).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ltwrite.h"
#include "ltindex.h"
#include "ltmods.h"
#include "ltstacks.h"

#define K LT_NODE_FRAMES
#define MAX_NODES (LT_MAX_DEPTH / K + 1)

_Static_assert(LT_MAX_DEPTH % K == 0, "a stack's nodes: whole ones and one more");

static int add_lock;			/* 0 free, else the tid of the thread adding nodes */

/*
 * A stack being looked up: its frames, each node's key and first frame,
 * outermost first (node j holds f[lo[j] .. lo[j - 1]), lo[-1] = depth).
 */
struct want {
	const uint64_t *f;
	uint32_t depth, cut, m;
	uint64_t key[MAX_NODES];
	uint16_t lo[MAX_NODES];
	/* match_one()'s: node j under parent */
	uint32_t j, parent;
};

static inline uint32_t node_hi(const struct want *w, uint32_t j)
{
	return j ? w->lo[j - 1] : w->depth;
}

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* The keys of @w's nodes; the last one's with the cut bits if any. */
static inline void want_keys(struct want *w, const uint64_t *f, uint32_t depth, uint32_t cut)
{
	uint64_t h = 0x6c7462737461636bull;	/* "ltbstack" */
	uint32_t hi = depth, j = 0;

	w->f = f;
	w->depth = depth;
	w->cut = cut;
	do {
		uint32_t lo = hi > K ? hi - K : 0;

		h ^= hi - lo;
		for (uint32_t i = lo; i < hi; i++)
			h = (h ^ f[i]) * 0x9e3779b97f4a7c15ull;
		h = mix(h);
		w->lo[j] = (uint16_t)lo;
		w->key[j++] = h;
		hi = lo;
	} while (hi);
	w->m = j;
	if (cut)
		w->key[j - 1] = mix(h ^ (0x100 | cut));
}

static inline struct lt_stack *node_at(uint32_t id)
{
	return (struct lt_stack *)lt_at(LT_STK, LT_STK_SHIFT, (uint64_t)id * 8);
}

/* Node @s is node @j of @w, its parent aside. */
static inline bool node_is(const struct want *w, const struct lt_stack *s, uint32_t j)
{
	uint32_t c = __atomic_load_n(&s->commit, __ATOMIC_ACQUIRE), lo = w->lo[j];
	uint32_t n = node_hi(w, j) - lo;

	return c == (LT_STK_OK | (c & LT_STK_LEAF) | (j == w->m - 1 ? w->cut : 0) << 16 | n) &&
	       !memcmp(s->frames, w->f + lo, n * sizeof(uint64_t));
}

/* Node @id is the whole of @w: it and its parents, inner to outer. */
static bool match_whole(const void *arg, uint32_t id)
{
	const struct want *w = arg;

	for (uint32_t j = w->m; j-- > 0;) {
		const struct lt_stack *s = node_at(id);

		if (!node_is(w, s, j))
			return false;
		id = s->parent;
		if (!j)
			return !id;
		if (!id)
			return false;
	}
	return false;
}

/* Node @id is node w->j of @w under w->parent. */
static bool match_one(const void *arg, uint32_t id)
{
	const struct want *w = arg;
	const struct lt_stack *s = node_at(id);

	return s->parent == w->parent && node_is(w, s, w->j);
}

/*
 * Room for a node of @n words: it, zeroed but its commit, and *@id; NULL
 * if there is none (ids run out at 32 GiB; a segment that cannot be made).
 * The mark moves by compare-and-exchange: one that would cross its
 * segment's end moves it to the next segment's start instead, and leaves
 * PAD where it was (a reader goes through the nodes in order).
 */
static struct lt_stack *room(uint32_t n, uint32_t *id)
{
	uint64_t len = sizeof(struct lt_stack) + (uint64_t)n * 8, off, end;
	unsigned int k;

	off = __atomic_load_n(&lt.h->stk_used, __ATOMIC_RELAXED);
	for (;;) {
		if (off + len > LT_STK_END)
			return NULL;
		k = lt_seg_of(off, LT_STK_SHIFT);
		end = lt_seg_start(k + 1, LT_STK_SHIFT);
		if (off + len <= end) {
			if (__atomic_compare_exchange_n(&lt.h->stk_used, &off, off + len, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		} else if (__atomic_compare_exchange_n(&lt.h->stk_used, &off, end, true,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			if (lt_made(LT_STK, k))
				__atomic_store_n(&((struct lt_stack *)lt_at(LT_STK, LT_STK_SHIFT,
									  off))->commit,
						 LT_STK_PAD, __ATOMIC_RELEASE);
			off = end;
		}
	}
	if (!lt_made(LT_STK, k) && livetable__grow(LT_STK, k))
		return NULL;
	*id = (uint32_t)(off / 8);
	return node_at(*id);
}

/*
 * Node @j of @w under @parent appended and committed: its id, 0 if no
 * room. The last one has the cut bits, and LEAF if @leaf (a whole stack).
 */
static uint32_t node_add(const struct want *w, uint32_t j, uint32_t parent, bool leaf)
{
	uint32_t n = node_hi(w, j) - w->lo[j], id, last = j == w->m - 1;
	struct lt_stack *s = room(n, &id);

	if (!s)
		return 0;
	s->parent = parent;
	memcpy(s->frames, w->f + w->lo[j], n * sizeof(uint64_t));
	__atomic_store_n(&s->commit, LT_STK_OK | (last && leaf ? LT_STK_LEAF : 0) |
			 (last ? w->cut : 0) << 16 | n, __ATOMIC_RELEASE);
	return id;
}

/* Take the lock of adding nodes: false if this thread holds it (a signal's allocation in it). */
static bool add_lock_take(void)
{
	int me = lt_tls.tid ? (int)lt_tls.tid : (int)syscall(SYS_gettid), free_ = 0;

	while (!__atomic_compare_exchange_n(&add_lock, &free_, me, false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (free_ == me)
			return false;
		free_ = 0;
		sched_yield();
	}
	return true;
}

static void add_lock_drop(bool locked)
{
	if (locked)
		__atomic_store_n(&add_lock, 0, __ATOMIC_RELEASE);
}

/* Chain @w (its keys made) if it is there: its last node's id, else 0. */
static inline uint32_t chain_find(const struct want *w)
{
	return ltindex__find(w->key[w->m - 1], match_whole, w);
}

/*
 * Chain @w added where it is not there yet, inside a section: its last
 * node's id (LEAF if @leaf: a whole stack), 0 if there was no room.
 */
static uint32_t chain_add(struct want *w, bool leaf)
{
	uint32_t id = 0;
	bool locked;

	/* Each node's slot asked for at once: their misses overlap (a new stack's are cold). */
	ltindex__prefetch(w->key, w->m - 1);
	/* The nodes there already, from the outer end. */
	for (w->j = 0, w->parent = 0; w->j < w->m; w->j++) {
		id = ltindex__find(w->key[w->j], match_one, w);
		if (!id)
			break;
		w->parent = id;
	}
	if (w->j == w->m)
		return id;
	/*
	 * The rest added, each looked for again under the lock. A thread
	 * that holds the lock already (a signal's allocation inside its
	 * own) adds them without the index: a second copy, never a wrong one.
	 */
	locked = add_lock_take();
	for (uint32_t j = w->j; j < w->m; j++) {
		w->j = j;
		id = locked ? ltindex__find(w->key[j], match_one, w) : 0;
		if (!id) {
			id = node_add(w, j, w->parent, leaf);
			if (!id)
				break;
			if (locked)
				ltindex__add(w->key[j], id);
		}
		w->parent = id;
	}
	add_lock_drop(locked);
	return id;
}

/*
 * An interpreter's stack: two chains, its native frames (f[0, nn)) and
 * the interpreter's words after them, each shared with the stacks that
 * share it, joined by a node of one word (include/heapsnoop/livetable.h,
 * LT_STK_JOIN). Found by one probe (the two chains' keys and the cut
 * bits, mixed), compared chain by chain.
 */
struct join {
	struct want a, b;
	uint32_t cut;
	uint32_t ida, idb;		/* the chains' ids once known (0: compare their frames) */
	uint64_t key;
};

/*
 * Where @f[@depth]'s interpreter words begin: they are its last ones
 * (LT_PY_WORD: no native frame has bit 63), so a native stack costs one
 * test.
 */
static inline uint32_t native_end(const uint64_t *f, uint32_t depth)
{
	uint32_t nn = depth;

	while (nn && (f[nn - 1] & LT_PY_WORD))
		nn--;
	return nn;
}

static inline void join_keys(struct join *jn, const uint64_t *f, uint32_t nn, uint32_t depth,
			     uint32_t cut)
{
	uint64_t b;

	want_keys(&jn->a, f, nn, 0);
	want_keys(&jn->b, f + nn, depth - nn, 0);
	b = jn->b.key[jn->b.m - 1];
	jn->cut = cut;
	jn->ida = jn->idb = 0;
	jn->key = mix(jn->a.key[jn->a.m - 1] ^ (b << 17 | b >> 47) ^ (0x200 | cut));
}

/* Node @id joins @arg's two chains. */
static bool match_join(const void *arg, uint32_t id)
{
	const struct join *jn = arg;
	const struct lt_stack *s = node_at(id);
	uint32_t c = __atomic_load_n(&s->commit, __ATOMIC_ACQUIRE);

	if (c != (LT_STK_OK | LT_STK_LEAF | LT_STK_JOIN | jn->cut << 16 | 1))
		return false;
	if (jn->ida)
		return s->parent == jn->ida && s->frames[0] == jn->idb;
	return match_whole(&jn->a, s->parent) && match_whole(&jn->b, (uint32_t)s->frames[0]);
}

/* The join of @jn's two chains (their ids known) added if not there: its id, 0 if no room. */
static uint32_t join_add(struct join *jn)
{
	bool locked = add_lock_take();
	uint32_t id = locked ? ltindex__find(jn->key, match_join, jn) : 0;
	struct lt_stack *s;

	if (!id && (s = room(1, &id))) {
		s->parent = jn->ida;
		s->frames[0] = jn->idb;
		__atomic_store_n(&s->commit, LT_STK_OK | LT_STK_LEAF | LT_STK_JOIN | jn->cut << 16 | 1,
				 __ATOMIC_RELEASE);
		if (locked)
			ltindex__add(jn->key, id);
	}
	add_lock_drop(locked);
	return id;
}

uint32_t ltstacks__find(const uint64_t *f, uint32_t depth, uint32_t cut)
{
	uint32_t nn = native_end(f, depth);
	struct join jn;

	if (!nn || nn == depth) {
		want_keys(&jn.a, f, depth, cut);
		return chain_find(&jn.a);
	}
	join_keys(&jn, f, nn, depth, cut);
	return ltindex__find(jn.key, match_join, &jn);
}

uint32_t ltstacks__intern(const uint64_t *f, uint32_t depth, uint32_t cut)
{
	uint32_t nn = native_end(f, depth), id;
	struct join jn;

	if (!nn || nn == depth) {
		want_keys(&jn.a, f, depth, cut);
		id = chain_find(&jn.a);
	} else {
		join_keys(&jn, f, nn, depth, cut);
		id = ltindex__find(jn.key, match_join, &jn);
	}
	if (id)
		return id;
	lt_section_enter();
	/* Every module its frames may be in, recorded before an entry names it. */
	ltmods__refresh();
	if (!nn || nn == depth) {
		id = chain_add(&jn.a, true);
	} else {
		jn.ida = chain_find(&jn.a);
		if (!jn.ida)
			jn.ida = chain_add(&jn.a, false);
		jn.idb = jn.ida ? chain_find(&jn.b) : 0;
		if (jn.ida && !jn.idb)
			jn.idb = chain_add(&jn.b, false);
		id = jn.idb ? join_add(&jn) : 0;
	}
	lt_section_exit();
	if (!id)
		__atomic_fetch_add(&lt.h->lost_stacks, 1, __ATOMIC_RELAXED);
	return id;
}

uint64_t *ltstacks__reserve(uint32_t n, uint32_t *id)
{
	struct lt_stack *s;

	if (n > LT_MAX_DEPTH)
		return NULL;
	s = room(n, id);
	if (!s) {
		__atomic_fetch_add(&lt.h->lost_stacks, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	s->parent = 0;
	return s->frames;
}

void ltstacks__commit(uint32_t id, uint32_t n)
{
	__atomic_store_n(&node_at(id)->commit, LT_STK_OK | n, __ATOMIC_RELEASE);
}

int ltstacks__init(void)
{
	if (ltindex__init() || ltmods__init())
		return -ENOMEM;
	return 0;
}

void ltstacks__forked(void)
{
	add_lock = 0;
	ltmods__forked();
}

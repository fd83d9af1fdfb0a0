// SPDX-License-Identifier: MIT
/*
 * stacktree.c - a process's unique stacks as a radix tree of frames (see
 * stacktree.h; heaptrack's trace tree, src/track/tracetree.h, with its
 * chains kept as one node, as a radix tree's edges are).
 *
 * A node, packed in a byte arena at its id (its offset):
 *
 *   u32  parent     a node's id (even) | lean (1), or STACK_TREE_ROOT |
 *                   cut flags
 *   u16  header     frames (10 bits), a ref node (1), ends a stack (1),
 *                   cut flags (3), has children in the index (1)
 *   u8   fp[2]      a byte of the hash of each inline child's key  } not
 *   u32  kid[2]     its first two children (id + 1; 0: none)       } lean
 *   [u32 ref        a ref node's: where its frames are]
 *   [STACK_TREE_PAYLOAD bytes, if it ends a stack]
 *   its frames      each LEB128(zigzag(frame - the frame before it)),
 *                   the one before the first being its parent's last
 *                   (0 at the root); a ref node's are at its ref, in the
 *                   bytes of the node it was split from (split())
 *
 * A node made for a new stack under another node is lean: a leaf, as
 * most stay (a stack that goes on past a leaf's end is rare), with no
 * room for inline children: 10 bytes less a stack; children it gets go
 * to the index. Its parent field's low bit says so (ids are even); a
 * root's children, and a node a split makes (a branch), have the room.
 *
 * A child is found by its key, (parent, its first frame's varint), or
 * (parent, none) for a node of no frames: among its parent's two inline
 * children by their hash bytes, so that a step down reads the one node
 * it goes to (heaptrack's children are a sorted vector in each node);
 * the children of a root and those past a node's second in an index:
 * open addressing, linear probing, any number of slots (Lemire's
 * multiply-shift puts a hash in range), at most 4/5 full, grown by half;
 * each slot an id and a byte of its key's hash, four to a group, so a
 * probe reads a node only when the byte matches. Keys never need a frame
 * outside their node: splitting a node cuts its run of differences in
 * two and re-encodes nothing (the first part becomes the parent, in the
 * node's place under its own parent; the second keeps the id, its
 * children and its stack). The first part's bytes stay where they were,
 * the new node a ref node naming them, unless they are a byte or two:
 * copying them would leave them twice in the arena, a node's bytes never
 * being freed (clang++: 10 bytes a stack).
 *
 * The arena is a first chunk grown by doubling to CHUNK_SIZE, then
 * chunks of CHUNK_SIZE, never moved; no node straddles two; nodes start
 * at even offsets (the writer's bitmaps are a bit per 2 bytes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "records.h"
#include "stacks.h"
#include "stacktree.h"

#define CHUNK_SHIFT	18
#define CHUNK_SIZE	(1u << CHUNK_SHIFT)
#define FIRST_CHUNK	4096u
#define MAX_CHUNKS	(STACK_TREE_ROOT >> CHUNK_SHIFT)

/* A node's run: one frame less than a record's, for the header's bit HDR_REF. */
#define RUN_MAX		(REC_NODE_MAX_FRAMES - 1)
#define HDR_FRAMES	0x03ffu		/* 0..1023: a run up to RUN_MAX */
#define HDR_REF		0x0400u		/* its frames are elsewhere: at its ref */
#define HDR_STACK	0x0800u
#define HDR_FLAGS_SHIFT	12
#define HDR_INDEXED	0x8000u		/* children past the inline two, in the index */
#define NODE_HDR	16		/* parent, header, fp[2], kid[2] */
#define NODE_REF	16		/* ... then a ref node's ref */
#define NODE_REF_HDR	20		/* parent, header, fp[2], kid[2], ref */
#define NODE_LEAN_HDR	6		/* parent, header: a lean node's */
#define PARENT_LEAN	1u		/* the parent field's bit: lean */
#define NODE_FP		6
#define NODE_KID	8
#define INLINE_KIDS	2
/*
 * A split's first part of at most this many bytes of varints is copied
 * into its node (16 bytes and them); more, and its node refers to them
 * where they are (20 bytes): prog_paths's branches of one near frame (a
 * byte) are copied, clang++'s first parts, about 20 bytes, are not.
 */
#define SPLIT_COPY_MAX	2
/* The largest node: a run of RUN_MAX frames, each in 10 bytes. */
#define NODE_MAX	(NODE_REF_HDR + STACK_TREE_PAYLOAD + RUN_MAX * 10)

#define KEY_NONE	UINT64_MAX	/* the key of a node of no frames */
#define NO_NODE		UINT32_MAX
#define MIN_SLOTS	16

_Static_assert(NODE_MAX < CHUNK_SIZE, "a node fits in a chunk");
_Static_assert(RUN_MAX <= HDR_FRAMES && RUN_MAX <= REC_NODE_MAX_FRAMES,
	       "a node's frames fit in its header, and in a record");
_Static_assert(STACK_CUT_ALL < 8 && (STACK_TREE_ROOT & STACK_CUT_ALL) == 0 &&
	       (STACK_CUT_ALL << HDR_FLAGS_SHIFT & HDR_INDEXED) == 0,
	       "a root's parent holds the cut flags, a header them and the index bit");

struct slot_group {
	uint32_t node[4];	/* id + 1; 0: empty */
	uint8_t fp[4];		/* a byte of the key's hash */
};

struct stack_tree {
	unsigned char **chunks;
	uint32_t nchunks;
	uint32_t first_cap;	/* the first chunk's size while it grows */
	uint32_t pos;		/* where the last chunk's free bytes start */
	struct slot_group *groups;
	uint32_t slots;		/* a multiple of 4 */
	uint32_t used_slots;
	size_t stacks, nodes, frames, used;
	uint64_t serial;
};

/* --- nodes ---------------------------------------------------------------- */

static inline unsigned char *at(const struct stack_tree *st, uint32_t id)
{
	return st->chunks[id >> CHUNK_SHIFT] + (id & (CHUNK_SIZE - 1));
}

static inline uint32_t raw_parent(const unsigned char *n)
{
	uint32_t v;

	memcpy(&v, n, sizeof(v));
	return v;
}

/* Is node @n lean (no inline children)? */
static inline bool is_lean(const unsigned char *n)
{
	uint32_t v = raw_parent(n);

	return stack_tree__is_node(v) && (v & PARENT_LEAN);
}

static inline uint32_t get_parent(const unsigned char *n)
{
	uint32_t v = raw_parent(n);

	return stack_tree__is_node(v) ? v & ~PARENT_LEAN : v;
}

/* @n's parent is @v now; lean if @lean (a node's child only). */
static inline void put_parent(unsigned char *n, uint32_t v, bool lean)
{
	if (lean && stack_tree__is_node(v))
		v |= PARENT_LEAN;
	memcpy(n, &v, sizeof(v));
}

/* @n's parent is @v now, @n as lean as it was. */
static inline void set_parent(unsigned char *n, uint32_t v)
{
	put_parent(n, v, is_lean(n));
}

static inline uint16_t get_hdr(const unsigned char *n)
{
	uint16_t v;

	memcpy(&v, n + 4, sizeof(v));
	return v;
}

/* The bytes before node @n's payload (if any) and frames. */
static inline size_t hdr_size(const unsigned char *n)
{
	if (is_lean(n))
		return NODE_LEAN_HDR;
	return get_hdr(n) & HDR_REF ? NODE_REF_HDR : NODE_HDR;
}

/* A ref node's: where its frames are in the arena (another node's bytes). */
static inline uint32_t get_ref(const unsigned char *n)
{
	uint32_t v;

	memcpy(&v, n + NODE_REF, sizeof(v));
	return v;
}

static inline void set_ref(unsigned char *n, uint32_t v)
{
	memcpy(n + NODE_REF, &v, sizeof(v));
}

static inline void set_hdr(unsigned char *n, uint16_t v)
{
	memcpy(n + 4, &v, sizeof(v));
}

static inline uint32_t get_kid(const unsigned char *n, int j)
{
	uint32_t v;

	if (is_lean(n))
		return 0;
	memcpy(&v, n + NODE_KID + 4 * j, sizeof(v));
	return v;
}

static inline void set_kid(unsigned char *n, int j, uint32_t v, uint8_t fp)
{
	memcpy(n + NODE_KID + 4 * j, &v, sizeof(v));
	n[NODE_FP + j] = fp;
}

/* Where node @n's frames start: after its header and payload, or at its ref. */
static inline unsigned char *edge_of(const struct stack_tree *st, unsigned char *n)
{
	uint16_t hdr = get_hdr(n);

	if (hdr & HDR_REF && !is_lean(n))
		return at(st, get_ref(n));
	return n + hdr_size(n) + (hdr & HDR_STACK ? STACK_TREE_PAYLOAD : 0);
}

static inline unsigned int put_varint(unsigned char *p, uint64_t v)
{
	unsigned int n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* The tree's own bytes: always a whole varint, at most 10 bytes. */
static inline unsigned int get_varint(const unsigned char *p, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int n = 0;

	do
		x |= (uint64_t)(p[n] & 0x7f) << (7 * n);
	while (p[n++] & 0x80);
	*v = x;
	return n;
}

static inline unsigned int varint_len(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* The bytes of node @n's first @k frames. */
static size_t edge_bytes(const struct stack_tree *st, unsigned char *n, uint32_t k)
{
	const unsigned char *e = edge_of(st, n), *p = e;
	uint64_t v;

	while (k--)
		p += get_varint(p, &v);
	return (size_t)(p - e);
}

/*
 * @size bytes in the arena for a new node: its id, or NO_NODE. The first
 * chunk grows (moved by realloc: no pointer into it is held across a
 * call), the others are new.
 */
static uint32_t arena_alloc(struct stack_tree *st, size_t size)
{
	unsigned char **v, *c;
	uint32_t id;

	size = (size + 1) & ~(size_t)1;	/* ids even: the writer's bitmaps are a bit per 2 bytes */
	if (!st->nchunks) {
		st->chunks = malloc(sizeof(*st->chunks));
		c = malloc(FIRST_CHUNK);
		if (!st->chunks || !c) {
			free(c);
			return NO_NODE;
		}
		st->chunks[st->nchunks++] = c;
		st->first_cap = FIRST_CHUNK;
	}
	if (st->nchunks == 1 && st->pos + size > st->first_cap && st->first_cap < CHUNK_SIZE) {
		uint32_t cap = st->first_cap;

		while (st->pos + size > cap && cap < CHUNK_SIZE)
			cap *= 2;
		c = realloc(st->chunks[0], cap);
		if (!c)
			return NO_NODE;
		st->chunks[0] = c;
		st->first_cap = cap;
	}
	if (st->pos + size > (st->nchunks == 1 ? st->first_cap : CHUNK_SIZE)) {
		if (st->nchunks == MAX_CHUNKS)
			return NO_NODE;
		v = realloc(st->chunks, (st->nchunks + 1) * sizeof(*v));
		if (!v)
			return NO_NODE;
		st->chunks = v;
		c = malloc(CHUNK_SIZE);
		if (!c)
			return NO_NODE;
		st->chunks[st->nchunks++] = c;
		st->pos = 0;
	}
	id = ((st->nchunks - 1) << CHUNK_SHIFT) | st->pos;
	st->pos += (uint32_t)size;
	st->used += size;
	return id;
}

/* --- the index ------------------------------------------------------------ */

static inline uint64_t key_hash(uint32_t parent, uint64_t key)
{
	return htab_hash2(key, parent);
}

static inline uint32_t home_of(uint64_t h, uint32_t slots)
{
	return (uint32_t)(((h >> 32) * slots) >> 32);
}

static inline uint8_t fp_of(uint64_t h)
{
	return (uint8_t)(h >> 8);
}

/*
 * Node @id's key: its parent, its first frame's varint; KEY_NONE (which
 * it hashes as) and *@none for a node of no frames.
 */
static uint64_t key_of(const struct stack_tree *st, uint32_t id, uint32_t *parent, bool *none)
{
	unsigned char *n = at(st, id);
	uint64_t key = KEY_NONE;

	*parent = get_parent(n);
	*none = !(get_hdr(n) & HDR_FRAMES);
	if (!*none)
		get_varint(edge_of(st, n), &key);
	return key;
}

static bool key_is(const struct stack_tree *st, uint32_t id, uint32_t parent, uint64_t key,
		   bool none)
{
	unsigned char *n = at(st, id);
	uint64_t v;

	if (get_parent(n) != parent || none != !(get_hdr(n) & HDR_FRAMES))
		return false;
	if (none)
		return true;
	get_varint(edge_of(st, n), &v);
	return v == key;
}

/*
 * The node of key (@parent, @key) (@none: of no frames), or NO_NODE.
 * With @next, the slot of the key (that node, @next_key) asked of the
 * memory before the node is read: a walk's next step, if the node's run
 * is of one frame, as a branch's mostly is (its miss overlaps this one's).
 */
static uint32_t index_find(const struct stack_tree *st, uint32_t parent, uint64_t key, bool none,
			   bool next, uint64_t next_key)
{
	uint64_t h = key_hash(parent, key);
	uint32_t i = home_of(h, st->slots);
	uint8_t fp = fp_of(h);

	for (;;) {
		const struct slot_group *g = &st->groups[i >> 2];
		uint32_t v = g->node[i & 3];

		if (!v)
			return NO_NODE;
		if (g->fp[i & 3] == fp) {
			if (next)
				__builtin_prefetch(&st->groups[home_of(key_hash(v - 1, next_key),
								       st->slots) >> 2]);
			if (key_is(st, v - 1, parent, key, none))
				return v - 1;
		}
		if (++i == st->slots)
			i = 0;
	}
}

static void slots_put(struct slot_group *groups, uint32_t slots, uint64_t h, uint32_t id)
{
	uint32_t i = home_of(h, slots);

	while (groups[i >> 2].node[i & 3])
		if (++i == slots)
			i = 0;
	groups[i >> 2].node[i & 3] = id + 1;
	groups[i >> 2].fp[i & 3] = fp_of(h);
}

/*
 * Half as many slots again, every node put back. Its key is read from the
 * node: a batch's nodes are asked for before they are read, so that the
 * misses overlap.
 */
static int index_grow(struct stack_tree *st)
{
	uint32_t slots = st->slots + (st->slots / 2 + 3) / 4 * 4, batch[16], nb = 0;
	struct slot_group *g = calloc(slots / 4, sizeof(*g));

	if (!g)
		return -ENOMEM;
	for (uint32_t i = 0; i <= st->slots; i++) {
		uint32_t v = i < st->slots ? st->groups[i >> 2].node[i & 3] : 0;

		if (v) {
			__builtin_prefetch(at(st, v - 1));
			batch[nb++] = v - 1;
		}
		if (nb == 16 || (i == st->slots && nb)) {
			for (uint32_t k = 0; k < nb; k++) {
				uint32_t parent;
				bool none;
				uint64_t key = key_of(st, batch[k], &parent, &none);

				slots_put(g, slots, key_hash(parent, key), batch[k]);
			}
			nb = 0;
		}
	}
	free(st->groups);
	st->groups = g;
	st->slots = slots;
	return 0;
}

/* Room for one more key: 0 or -ENOMEM. */
static int index_reserve(struct stack_tree *st)
{
	if ((uint64_t)(st->used_slots + 1) * 5 <= (uint64_t)st->slots * 4)
		return 0;
	return index_grow(st);
}

static void index_add(struct stack_tree *st, uint32_t parent, uint64_t key, uint32_t id)
{
	slots_put(st->groups, st->slots, key_hash(parent, key), id);
	st->used_slots++;
}

/* The slot of node @old (key @parent, @key) now holds @id, whose key is the same. */
static void index_replace(struct stack_tree *st, uint32_t parent, uint64_t key, uint32_t old,
			  uint32_t id)
{
	uint32_t i = home_of(key_hash(parent, key), st->slots);

	while (st->groups[i >> 2].node[i & 3] != old + 1)
		if (++i == st->slots)
			i = 0;
	st->groups[i >> 2].node[i & 3] = id + 1;
}

/* --- a node's children ---------------------------------------------------- */

/*
 * The child of @parent of key @key (@none: of no frames), or NO_NODE: one
 * of its two inline ones, else from the index (a root's children, those
 * past the second). With @next, the child's own child of key @next_key
 * asked of the memory as soon as the child is known: the walk's next
 * step, if the child's run is of one frame, as a branch's mostly is.
 */
static uint32_t find_child(const struct stack_tree *st, uint32_t parent, uint64_t key, bool none,
			   bool next, uint64_t next_key)
{
	const unsigned char *n;
	uint8_t fp;

	if (!stack_tree__is_node(parent))
		return index_find(st, parent, key, none, next, next_key);
	n = at(st, parent);
	fp = fp_of(key_hash(parent, key));
	for (int j = 0; j < INLINE_KIDS; j++) {
		uint32_t v = get_kid(n, j);

		if (!v || n[NODE_FP + j] != fp)
			continue;
		if (next)
			__builtin_prefetch(at(st, v - 1));
		if (key_is(st, v - 1, parent, key, none))
			return v - 1;
	}
	return get_hdr(n) & HDR_INDEXED ? index_find(st, parent, key, none, next, next_key) :
					  NO_NODE;
}

/*
 * Node @id, of key (@parent, @key), is @parent's child: inline if it has
 * room, else in the index (reserved: index_reserve()).
 */
static void add_child(struct stack_tree *st, uint32_t parent, uint64_t key, uint32_t id)
{
	unsigned char *n;

	if (stack_tree__is_node(parent)) {
		n = at(st, parent);
		for (int j = 0; j < INLINE_KIDS && !is_lean(n); j++) {
			if (!get_kid(n, j)) {
				set_kid(n, j, id + 1, fp_of(key_hash(parent, key)));
				return;
			}
		}
		set_hdr(n, get_hdr(n) | HDR_INDEXED);
	}
	index_add(st, parent, key, id);
}

/* @parent's child @old is @id now, of the same key. */
static void replace_child(struct stack_tree *st, uint32_t parent, uint64_t key, uint32_t old,
			  uint32_t id)
{
	unsigned char *n;

	if (stack_tree__is_node(parent)) {
		n = at(st, parent);
		for (int j = 0; j < INLINE_KIDS; j++) {
			if (get_kid(n, j) == old + 1) {
				set_kid(n, j, id + 1, n[NODE_FP + j]);
				return;
			}
		}
	}
	index_replace(st, parent, key, old, id);
}

/* --- the tree ------------------------------------------------------------- */

struct stack_tree *stack_tree__new(void)
{
	static uint64_t serials;	/* the loop's thread alone makes trees */
	struct stack_tree *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->serial = ++serials;
	st->slots = MIN_SLOTS;
	st->groups = calloc(MIN_SLOTS / 4, sizeof(*st->groups));
	if (!st->groups) {
		free(st);
		return NULL;
	}
	return st;
}

void stack_tree__free(struct stack_tree *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; i < st->nchunks; i++)
		free(st->chunks[i]);
	free(st->chunks);
	free(st->groups);
	free(st);
}

/*
 * A new node under @parent of @k frames, @frames[@k - 1] down to
 * @frames[0] (the root side first), after @prev, its cut flags @flags;
 * ending a stack if @stack. Returns its id or NO_NODE (no memory).
 */
static uint32_t add_node(struct stack_tree *st, uint32_t parent, const uint64_t *frames,
			 uint32_t k, uint64_t prev, uint32_t flags, bool stack)
{
	bool lean = stack_tree__is_node(parent);
	size_t hdr = lean ? NODE_LEAN_HDR : NODE_HDR;
	size_t size = hdr + (stack ? STACK_TREE_PAYLOAD : 0);
	uint64_t p = prev, key = KEY_NONE;
	unsigned char *n, *e;
	uint32_t id;

	for (uint32_t i = k; i-- > 0; p = frames[i])
		size += varint_len(zigzag(frames[i] - p));
	if (index_reserve(st))
		return NO_NODE;
	id = arena_alloc(st, size);
	if (id == NO_NODE)
		return NO_NODE;
	n = at(st, id);
	memset(n, 0, hdr + (stack ? STACK_TREE_PAYLOAD : 0));
	put_parent(n, parent, lean);
	set_hdr(n, (uint16_t)(k | (stack ? HDR_STACK : 0) | flags << HDR_FLAGS_SHIFT));
	e = edge_of(st, n);
	for (uint32_t i = k; i-- > 0; prev = frames[i]) {
		uint64_t z = zigzag(frames[i] - prev);

		if (i == k - 1)
			key = z;
		e += put_varint(e, z);
	}
	add_child(st, parent, key, id);
	st->nodes++;
	st->frames += k;
	st->stacks += stack;
	return id;
}

/* @p's @n bytes reversed in place. */
static void reverse(unsigned char *p, size_t n)
{
	for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
		unsigned char t = p[i];

		p[i] = p[j - 1];
		p[j - 1] = t;
	}
}

/*
 * Node @id's first @k frames (0 < @k < its frames) become a node of
 * their own, its new parent, which ends a stack if @stack. Returns the
 * new node or NO_NODE (no memory: @id unchanged).
 *
 * The first part's varints are copied into the new node when they are a
 * few bytes (SPLIT_COPY_MAX), @id's rest moved down over them (they stay
 * unused at its end, as they did); else the new node refers to them
 * where they are: a ref node's ref moves on past them, a node's own run
 * is turned round in place, the rest first and the first part at its
 * end, which the new node's ref names. No byte is copied twice, and a
 * branch costs its 20 bytes, not 16 and its frames again.
 */
static uint32_t split(struct stack_tree *st, uint32_t id, uint32_t k, bool stack)
{
	size_t head, all, hsize;
	uint32_t parent, y, ref = 0;
	unsigned char *n, *yn, *e;
	uint16_t hdr;
	uint64_t key, next;
	bool none, copy;

	n = at(st, id);
	hdr = get_hdr(n);
	head = edge_bytes(st, n, k);
	all = edge_bytes(st, n, hdr & HDR_FRAMES);
	key = key_of(st, id, &parent, &none);
	copy = head <= SPLIT_COPY_MAX;
	hsize = copy ? NODE_HDR : NODE_REF_HDR;
	if (index_reserve(st))
		return NO_NODE;
	y = arena_alloc(st, hsize + (stack ? STACK_TREE_PAYLOAD : 0) + (copy ? head : 0));
	if (y == NO_NODE)
		return NO_NODE;
	n = at(st, id);		/* the first chunk may have moved */
	yn = at(st, y);
	e = edge_of(st, n);
	memset(yn, 0, hsize + (stack ? STACK_TREE_PAYLOAD : 0));
	put_parent(yn, parent, false);
	set_hdr(yn, (uint16_t)(k | (stack ? HDR_STACK : 0) | (copy ? 0 : HDR_REF) |
			       (hdr & ~(HDR_FRAMES | HDR_STACK | HDR_INDEXED | HDR_REF))));
	if (copy)
		memcpy(edge_of(st, yn), e, head);
	if (!is_lean(n) && (hdr & HDR_REF)) {
		/* Its run is elsewhere: it starts past the first part now. */
		ref = get_ref(n);
		set_ref(n, ref + (uint32_t)head);
	} else if (copy) {
		/* @id keeps the rest of its run, under @y: its own bytes move down. */
		memmove(e, e + head, all - head);
	} else {
		/* [first part][rest] -> [rest][first part], in place. */
		reverse(e, head);
		reverse(e + head, all - head);
		reverse(e, all);
		ref = id + (uint32_t)(e - n) + (uint32_t)(all - head);
	}
	if (!copy)
		set_ref(yn, ref);
	replace_child(st, parent, key, id, y);
	set_parent(n, y);
	set_hdr(n, (uint16_t)((hdr & ~HDR_FRAMES) | ((hdr & HDR_FRAMES) - k)));
	get_varint(edge_of(st, n), &next);
	add_child(st, y, next, id);
	st->nodes++;
	st->stacks += stack;
	return y;
}

int stack_tree__intern(struct stack_tree *st, const uint64_t *frames, uint32_t n, uint32_t flags,
		       uint32_t *id, bool *created)
{
	uint32_t cur = STACK_TREE_ROOT | flags, c;
	uint64_t prev = 0;
	int64_t i = (int64_t)n - 1;	/* the next frame to find, root side first */

	*created = false;
	if (n > REC_MAX_DEPTH || (flags & ~STACK_CUT_ALL))
		return -EINVAL;
	while (i >= 0) {
		unsigned char *node, *e;
		uint64_t v, pc;
		uint32_t m, nf;

		c = find_child(st, cur, zigzag(frames[i] - prev), false, i > 0,
			       i > 0 ? zigzag(frames[i - 1] - frames[i]) : 0);
		if (c == NO_NODE) {
			/* A run longer than a node holds: a chain of full nodes, root side first. */
			while (i + 1 > RUN_MAX) {
				int64_t low = i + 1 - RUN_MAX;

				c = add_node(st, cur, frames + low, RUN_MAX, prev, flags, false);
				if (c == NO_NODE)
					return -ENOMEM;
				prev = frames[low];
				i = low - 1;
				cur = c;
			}
			c = add_node(st, cur, frames, (uint32_t)i + 1, prev, flags, true);
			if (c == NO_NODE)
				return -ENOMEM;
			*id = c;
			*created = true;
			return 0;
		}
		/* Its first frame is ours: how many more are. */
		node = at(st, c);
		nf = get_hdr(node) & HDR_FRAMES;
		e = edge_of(st, node);
		e += get_varint(e, &v);
		pc = frames[i];
		for (m = 1; m < nf && i - m >= 0; m++) {
			e += get_varint(e, &v);
			if (pc + unzigzag(v) != frames[i - m])
				break;
			pc = frames[i - m];
		}
		prev = pc;
		i -= m;
		if (m < nf) {
			/* The stack leaves the node's run (or ends in it: it ends there). */
			c = split(st, c, m, i < 0);
			if (c == NO_NODE)
				return -ENOMEM;
			if (i < 0) {
				*id = c;
				*created = true;
				return 0;
			}
		}
		cur = c;
	}
	/* Every frame found: the stack ends where @cur's run does. */
	if (stack_tree__is_node(cur) && (get_hdr(at(st, cur)) & HDR_STACK)) {
		*id = cur;
		return 0;
	}
	c = find_child(st, cur, KEY_NONE, true, false, 0);
	if (c == NO_NODE) {
		c = add_node(st, cur, frames, 0, prev, flags, true);
		if (c == NO_NODE)
			return -ENOMEM;
		*created = true;
	}
	*id = c;
	return 0;
}

unsigned char *stack_tree__payload(const struct stack_tree *st, uint32_t id)
{
	unsigned char *n = at(st, id);

	return n + hdr_size(n);
}

uint32_t stack_tree__flags(const struct stack_tree *st, uint32_t id)
{
	return get_hdr(at(st, id)) >> HDR_FLAGS_SHIFT & STACK_CUT_ALL;
}

uint32_t stack_tree__frames(const struct stack_tree *st, uint32_t id, uint64_t *out)
{
	/* Most stacks are a few nodes; a deep one's chain is taken from the heap. */
	uint32_t small[64], *chain = small, cap = 64, nchain = 0, total = 0, k;
	uint64_t prev = 0;

	/* Each node but a stack's own of no frames holds one at least. */
	for (uint32_t x = id; stack_tree__is_node(x) && nchain <= REC_MAX_DEPTH;
	     x = get_parent(at(st, x))) {
		if (nchain == cap) {
			uint32_t *bigger = malloc((size_t)(REC_MAX_DEPTH + 1) * sizeof(*chain));

			if (!bigger)
				return 0;
			memcpy(bigger, chain, nchain * sizeof(*chain));
			chain = bigger;
			cap = REC_MAX_DEPTH + 1;
		}
		chain[nchain++] = x;
		total += get_hdr(at(st, x)) & HDR_FRAMES;
	}
	if (total > REC_MAX_DEPTH) {
		total = 0;	/* not a tree this file made */
		goto out;
	}
	k = total;
	while (nchain--) {
		unsigned char *n = at(st, chain[nchain]), *e = edge_of(st, n);
		uint32_t nf = get_hdr(n) & HDR_FRAMES;
		uint64_t v;

		while (nf--) {
			e += get_varint(e, &v);
			prev += unzigzag(v);
			out[--k] = prev;
		}
	}
out:
	if (chain != small)
		free(chain);
	return total;
}

size_t stack_tree__count(const struct stack_tree *st)
{
	return st->stacks;
}

uint64_t stack_tree__serial(const struct stack_tree *st)
{
	return st->serial;
}

int stack_tree__for_each(const struct stack_tree *st, bool nodes,
			 int (*fn)(void *ctx, uint32_t id), void *ctx)
{
	/* Each node is in the index or an inline child of one node: from each in the index, down. */
	uint32_t *way = malloc((REC_MAX_DEPTH + 2) * INLINE_KIDS * sizeof(*way));
	int err = 0;

	if (!way)
		return -ENOMEM;
	for (uint32_t i = 0; i < st->slots && !err; i++) {
		uint32_t v = st->groups[i >> 2].node[i & 3], n = 0;

		if (v)
			way[n++] = v - 1;
		while (n && !err) {
			uint32_t x = way[--n];
			const unsigned char *p = at(st, x);

			if (nodes || (get_hdr(p) & HDR_STACK))
				err = fn(ctx, x);
			for (int j = 0; j < INLINE_KIDS; j++)
				if (get_kid(p, j))
					way[n++] = get_kid(p, j) - 1;
		}
	}
	free(way);
	return err;
}

void stack_tree__node(const struct stack_tree *st, uint32_t id, struct stack_node *n)
{
	const unsigned char *p = at(st, id);
	uint16_t hdr = get_hdr(p);

	n->parent = get_parent(p);
	n->nframes = hdr & HDR_FRAMES;
	n->stack = hdr & HDR_STACK;
}

uint64_t stack_tree__edge(const struct stack_tree *st, uint32_t id, uint64_t prev, uint64_t *out)
{
	unsigned char *n = at(st, id), *e = edge_of(st, n);
	uint32_t nf = get_hdr(n) & HDR_FRAMES;
	uint64_t v;

	for (uint32_t k = 0; k < nf; k++) {
		e += get_varint(e, &v);
		prev += unzigzag(v);
		out[k] = prev;
	}
	return prev;
}

size_t stack_tree__span(const struct stack_tree *st)
{
	return (size_t)st->nchunks << CHUNK_SHIFT;
}

void stack_tree__stats(const struct stack_tree *st, struct stack_tree_stats *s)
{
	*s = (struct stack_tree_stats){
		.stacks = st->stacks, .nodes = st->nodes, .frames = st->frames,
		.arena_bytes = st->nchunks ? (size_t)(st->nchunks - 1) * CHUNK_SIZE +
			       (st->nchunks == 1 ? st->first_cap : CHUNK_SIZE) : 0,
		.used_bytes = st->used, .index_slots = st->slots, .index_used = st->used_slots,
		.index_bytes = (size_t)st->slots / 4 * sizeof(struct slot_group),
	};
}

size_t stack_tree__memory(const struct stack_tree *st)
{
	struct stack_tree_stats s;

	stack_tree__stats(st, &s);
	return s.arena_bytes + s.index_bytes + st->nchunks * sizeof(*st->chunks) + sizeof(*st);
}

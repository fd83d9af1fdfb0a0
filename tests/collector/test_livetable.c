// SPDX-License-Identifier: MIT
/*
 * test_livetable.c - unit tests of the live table's reader and writer
 * (include/heapsnoop/livetable.h, livedump.h; user/collector/livetable/:
 * ltread.c, ltdump.c, ltfmt.c, and livetable.h's inline stores), built with
 * ASan+UBSan (the torture without: it runs the stores as the preload
 * does, at speed):
 *   - the async-signal-safe lines are records/' (user/common/records/),
 *     byte for byte, deep stacks' depth= and continuation tokens too, for
 *     every record a dump holds, and across the output buffer's edge;
 *   - a table made by hand walked exactly: live and free entries, the
 *     realloc link rule both ways, stacks that are missing, uncommitted,
 *     too deep or out of bounds, modules gone, torn or unterminated;
 *   - headers that lie about themselves refused;
 *   - a dump of it parsed back (records/) and decoded (codec) to its
 *     sizes and frames; an exit section;
 *   - the seqlock torture: writer threads publish, free and move entries
 *     with the preload's own stores while a reader walks, every entry's
 *     fields tied together: no torn entry is ever handed over in 10 M
 *     rounds (built with -DLT_NO_RECHECK, the walk without its second
 *     look at seq, the same test found 17 torn entries in as many rounds
 *     here: it can fail).
 * It runs here and in the arm64 guest (tests/arm64), where a missing
 * barrier would show.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heapsnoop/livedump.h"
#include "ltwrite.h"
#include "ltfmt.h"
#include "records.h"

/* --- the lines ------------------------------------------------------------ */

/* @r through ltfmt into a pipe's far end, and through records__write: the same bytes. */
static void same_bytes(const struct record *r, int n)
{
	static struct lt_out o;
	char *want = NULL, *got;
	size_t wlen = 0;
	FILE *f = open_memstream(&want, &wlen), *tmp = tmpfile();
	long glen;

	assert_non_null(f);
	assert_non_null(tmp);
	lt_out__init(&o, fileno(tmp));
	for (int i = 0; i < n; i++) {
		assert_int_equal(records__write(f, r), 0);
		assert_int_equal(ltfmt__record(&o, r), 0);
	}
	assert_int_equal(lt_out__flush(&o), 0);
	fclose(f);
	glen = lseek(fileno(tmp), 0, SEEK_END);
	assert_int_equal(glen, (long)wlen);
	got = malloc(wlen + 1);
	assert_int_equal(pread(fileno(tmp), got, wlen, 0), (ssize_t)wlen);
	assert_memory_equal(got, want, wlen);
	free(got);
	free(want);
	fclose(tmp);
}

static void test_lines(void **state)
{
	static const char tok[] = "~m#ML1ZOO4/EcBerJx3H4kAgCEkL39CecoCSkAQuxerJx3H4ICGbgAn";
	struct record r;

	(void)state;
	r = (struct record){ .type = REC_DUMP, .time_s = 1795652066, .time_ms = 7, .live = 14,
			     .bytes = 7558, .stacks = 0, .reason = "exit" };
	same_bytes(&r, 1);
	r.sample_bytes = 524288;
	r.time_s = -3;
	r.time_ms = 999;
	r.live = UINT64_MAX;
	strcpy(r.reason, "interval");
	same_bytes(&r, 1);
	r = (struct record){ .type = REC_MAP, .pid = 26168, .start = 0x564e3b8fc000,
			     .end = 0x564e3b8fd000, .off = 0, .path = "/a path/with spaces.so",
			     .build_id = "3b05adfacf3bdbd85947002e546260bbb9cf4d2f" };
	same_bytes(&r, 1);
	strcpy(r.build_id, "-");
	r.pid = -1;
	r.off = 0x1000;
	r.path = "[vdso]";
	same_bytes(&r, 1);
	for (uint32_t cut = 0; cut < 4; cut++) {
		r = (struct record){ .type = REC_LIVE, .pid = 7, .ptr = 0x7f4279ee9010, .cut = cut,
				     .token = tok, .token_len = sizeof(tok) - 1 };
		same_bytes(&r, 1);
	}
	r = (struct record){ .type = REC_LIVE, .pid = 7, .ptr = 0, .size = UINT64_MAX,
			     .error = "size out of range" };
	same_bytes(&r, 1);
	r = (struct record){ .type = REC_END_DUMP, .live = 0 };
	same_bytes(&r, 1);
	r = (struct record){ .type = REC_EXIT, .pid = 4242, .time_s = 17, .time_ms = 50,
			     .live = 3, .bytes = 9651, .comm = "prog with space" };
	same_bytes(&r, 1);
	r = (struct record){ .type = REC_END_EXIT, .pid = 4242, .live = 3 };
	same_bytes(&r, 1);
	/* Past the buffer's 32 KiB many times: the flushes cut no line. */
	r = (struct record){ .type = REC_LIVE, .pid = 123456, .ptr = 0xdeadbeef0, .cut = 1,
			     .token = tok, .token_len = sizeof(tok) - 1 };
	same_bytes(&r, 3000);
	/* Deep stacks: depth= and continuation tokens, whole or token and tail apart. */
	for (uint32_t depth = 32; depth <= LT_MAX_DEPTH; depth += 331) {
		static char run[REC_TOKENS_BUF];
		uint64_t frames[LT_MAX_DEPTH];
		int n, first;

		for (uint32_t i = 0; i < depth; i++)
			frames[i] = 0x401000 + i * 0x35;
		n = records__tokens(frames, depth, 4096, run, sizeof(run));
		assert_true(n > 0);
		first = (int)(strchr(run, ' ') - run);
		r = (struct record){ .type = REC_LIVE, .pid = 7, .ptr = 0x7f4279ee9010,
				     .cut = REC_CUT_DEPTH | REC_CUT_ORDER, .depth = depth,
				     .token = run, .token_len = (size_t)n };
		same_bytes(&r, 1);
		r.token_len = (size_t)first;
		r.tail = run + first;
		r.tail_len = (size_t)(n - first);
		same_bytes(&r, 700);
	}
	r = (struct record){ .type = REC_PROC };
	assert_int_equal(ltfmt__record(&(struct lt_out){ .fd = -1 }, &r), -EINVAL);
}

/* --- a table made by hand ------------------------------------------------- */

/*
 * Every region's segments placed in one buffer, 4 KiB for segment 0, as
 * a reader may be given them: modules 2 segments (12 KiB), stacks 4 (60
 * KiB: a node of LT_MAX_DEPTH + 1 frames fits only the last), entries 2
 * (384 slots).
 */
#define T_SEG0 4096u
#define T_SLOTS 64
static const unsigned int t_segs[LT_NREGIONS] = { 2, 4, 2 };

struct tbl {
	char *base;
	uint64_t size;
	struct lt_header *h;
	struct lt_view v;		/* a writer's view: to place records */
};

/* Offset @off of region @r in the buffer. */
static void *tbl_at(struct tbl *t, unsigned int r, uint64_t off)
{
	unsigned int k = lt_seg_of(off, 12);

	return t->base + t->h->region[r].seg[k] + (off - lt_seg_start(k, 12));
}

static struct lt_entry *tbl_ent(struct tbl *t, uint32_t slot)
{
	return tbl_at(t, LT_ENT, (uint64_t)slot * sizeof(struct lt_entry));
}

static void tbl_new(struct tbl *t)
{
	uint64_t off = LT_HDR_SIZE;

	t->size = LT_HDR_SIZE;
	for (unsigned int r = 0; r < LT_NREGIONS; r++)
		t->size += lt_seg_start(t_segs[r], 12);
	t->base = aligned_alloc(4096, t->size);
	assert_non_null(t->base);
	memset(t->base, 0, t->size);
	t->h = (struct lt_header *)t->base;
	*t->h = (struct lt_header){ .magic = LT_MAGIC, .version = LT_VERSION,
		.entry_size = sizeof(struct lt_entry), .pid = 99, .stk_used = 8, .comm = "hand" };
	for (unsigned int r = 0; r < LT_NREGIONS; r++) {
		t->h->region[r].seg0 = T_SEG0;
		for (unsigned int k = 0; k < t_segs[r]; k++) {
			t->h->region[r].seg[k] = off;
			off += (uint64_t)T_SEG0 << k;
		}
	}
}

/*
 * A committed node of @n words (@f) under @parent, commit bits @flags
 * (LT_STK_LEAF, cut << 16): its id. One that would cross its segment's
 * end leaves a PAD, as the writer does.
 */
static uint32_t tbl_node(struct tbl *t, uint32_t parent, const uint64_t *f, uint32_t n,
			 uint32_t flags)
{
	uint64_t off = t->h->stk_used, len = sizeof(struct lt_stack) + (uint64_t)n * 8;
	struct lt_stack *s;

	while (off + len > lt_seg_start(lt_seg_of(off, 12) + 1, 12)) {
		((struct lt_stack *)tbl_at(t, LT_STK, off))->commit = LT_STK_PAD;
		off = lt_seg_start(lt_seg_of(off, 12) + 1, 12);
	}
	s = tbl_at(t, LT_STK, off);
	s->parent = parent;
	memcpy(s->frames, f, n * 8);
	s->commit = LT_STK_OK | flags | n;
	t->h->stk_used = off + len;
	return (uint32_t)(off / 8);
}

/* A committed stack of @depth frames (@f) in one node, cut bits @cut: its id. */
static uint32_t tbl_stack(struct tbl *t, const uint64_t *f, uint32_t depth, uint32_t cut)
{
	return tbl_node(t, 0, f, depth, LT_STK_LEAF | cut << 16);
}

static void tbl_module(struct tbl *t, uint64_t start, const char *path, uint32_t gone)
{
	size_t plen = strlen(path) + 1;
	uint32_t len = (uint32_t)((sizeof(struct lt_module) + plen + 7) & ~7ul);
	uint64_t off = t->h->mod_used;
	struct lt_module *m;

	while (off + len > lt_seg_start(lt_seg_of(off, 12) + 1, 12)) {
		*(uint32_t *)tbl_at(t, LT_MOD, off) = LT_MOD_PAD;
		off = lt_seg_start(lt_seg_of(off, 12) + 1, 12);
	}
	m = tbl_at(t, LT_MOD, off);
	m->start = start;
	m->end = start + 0x1000;
	m->off = 0x2000;
	strcpy(m->build_id, "abcdef");
	memcpy(m->path, path, plen);
	m->gone = gone;
	m->commit = len;
	t->h->mod_used = off + len;
}

static void tbl_live(struct tbl *t, uint32_t slot, uint64_t addr, uint64_t size, uint32_t stack,
		     uint32_t link)
{
	lt_entry_publish(tbl_ent(t, slot), addr, size, stack, 1, link);
	if (t->h->ent_hwm <= slot)
		t->h->ent_hwm = slot + 1;
}

struct seen {
	uint64_t addr[T_SLOTS], size[T_SLOTS], first[T_SLOTS], last[T_SLOTS];
	uint32_t depth[T_SLOTS], cut[T_SLOTS], stack[T_SLOTS], n;
};

static int see(void *arg, const struct lt_live *l)
{
	struct seen *s = arg;

	s->addr[s->n] = l->addr;
	s->size[s->n] = l->size;
	s->depth[s->n] = l->depth;
	s->stack[s->n] = l->stack;
	s->first[s->n] = l->depth ? l->frames[0] : 0;
	s->last[s->n] = l->depth ? l->frames[l->depth - 1] : 0;
	s->cut[s->n++] = l->cut;
	return 0;
}

static const uint64_t F[] = { 0x401000, 0x401100, 0x401200, 0x7f0000001000 };

static void test_walk(void **state)
{
	struct lt_walk_stats st = { 0 };
	struct seen s = { 0 };
	struct lt_view v;
	struct tbl t;
	uint32_t a, b, deep, full;
	static uint64_t many[LT_MAX_DEPTH + 1];

	(void)state;
	tbl_new(&t);
	a = tbl_stack(&t, F, 4, 0);
	b = tbl_stack(&t, F, 2, REC_CUT_DEPTH | REC_CUT_UNREADABLE);
	deep = tbl_stack(&t, many, LT_MAX_DEPTH + 1, 0);	/* deeper than a record: refused */
	full = tbl_stack(&t, many, LT_MAX_DEPTH, REC_CUT_DEPTH);	/* a record's 1024: kept */
	assert_true(deep * 8ull >= lt_seg_start(2, 12));	/* past segments' ends: padded */
	tbl_live(&t, 0, 0x1000, 10, a, 0);
	tbl_live(&t, 1, 0x2000, 20, b, 0);
	tbl_live(&t, 2, 0x3000, 30, 0, 0);		/* no stack: written without one */
	tbl_live(&t, 3, 0x4000, 40, 99999, 0);		/* outside the stacks */
	tbl_live(&t, 4, 0x5000, 50, deep, 0);
	tbl_live(&t, 5, 0x6000, 60, a, 0);
	lt_entry_free(tbl_ent(&t, 5));			/* freed: not live */
	/* A realloc in flight: the new entry names slot 6, still live: only 6 counts. */
	tbl_live(&t, 6, 0x7000, 70, a, 0);
	tbl_live(&t, 7, 0x8000, 80, a, 6 + 1);
	/* ... and one whose old entry is freed: the new one is the block. */
	tbl_live(&t, 9, 0x9000, 90, a, 8 + 1);
	/* A link to itself or past the mark is no link. */
	tbl_live(&t, 10, 0xa000, 100, a, 10 + 1);
	tbl_live(&t, 11, 0xb000, 110, a, 60 + 1);
	tbl_live(&t, 12, 0xc000, 120, full, 0);
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_walk(&v, 0, 0, see, &s, &st), 0);
	assert_int_equal(s.n, 10);
	assert_int_equal(st.linked, 1);
	assert_int_equal(st.no_stack, 1);
	assert_int_equal(st.bad_stack, 2);
	assert_int_equal(s.addr[0], 0x1000);
	assert_int_equal(s.depth[0], 4);
	assert_int_equal(s.first[0], F[0]);
	assert_int_equal(s.last[0], F[3]);
	assert_int_equal(s.cut[1], REC_CUT_DEPTH | REC_CUT_UNREADABLE);
	assert_int_equal(s.depth[2], 0);
	assert_int_equal(s.depth[3], 0);	/* a bad stack: none */
	assert_int_equal(s.stack[3], 0);
	assert_int_equal(s.depth[4], 0);
	assert_int_equal(s.addr[5], 0x7000);
	assert_int_equal(s.addr[6], 0x9000);
	assert_int_equal(s.addr[7], 0xa000);
	assert_int_equal(s.addr[8], 0xb000);
	assert_int_equal(s.depth[9], LT_MAX_DEPTH);
	assert_int_equal(s.cut[9], REC_CUT_DEPTH);
	/* The mark bounds the walk: a live entry past it is not there yet. */
	tbl_live(&t, 20, 0xd000, 1, a, 0);
	t.h->ent_hwm = 20;
	s.n = 0;
	lt_walk(&v, 0, 0, see, &s, &st);
	assert_int_equal(s.n, 10);
	/* A stack not committed yet is none. */
	((struct lt_stack *)tbl_at(&t, LT_STK, (uint64_t)a * 8))->commit = 0;
	memset(&st, 0, sizeof(st));
	s.n = 0;
	lt_walk(&v, 0, 0, see, &s, &st);
	assert_int_equal(st.bad_stack, 2 + 5);
	free(t.base);
}

/*
 * Stacks of nodes: the frames of a node, then its parent's; a parent at
 * or past its child (a loop), an empty node inside a chain, more than
 * LT_MAX_DEPTH frames in all, a parent past the mark or uncommitted: each
 * none. JOIN nodes: two chains end to end; a join of a join, of a chain
 * past it, of none, of two words, of more than LT_MAX_DEPTH frames: none.
 */
static void test_nodes(void **state)
{
	struct lt_walk_stats st = { 0 };
	struct seen s = { 0 };
	struct lt_view v;
	struct tbl t;
	static uint64_t f[LT_MAX_DEPTH], out[LT_MAX_DEPTH];
	uint32_t outer, mid, leaf, other, cut, loop, empty, e2, big, over, late, d, c;

	(void)state;
	for (uint32_t i = 0; i < LT_MAX_DEPTH; i++)
		f[i] = 0x500000 + i;
	tbl_new(&t);
	/* f[0..20) as outer f[12..20), mid f[4..12), leaf f[0..4); another leaf beside. */
	outer = tbl_node(&t, 0, f + 12, 8, 0);
	mid = tbl_node(&t, outer, f + 4, 8, 0);
	leaf = tbl_node(&t, mid, f, 4, LT_STK_LEAF);
	other = tbl_node(&t, mid, f + 100, 3, LT_STK_LEAF);
	cut = tbl_node(&t, mid, f, 4, LT_STK_LEAF | REC_CUT_DEPTH << 16);
	loop = tbl_node(&t, 0, f, 2, LT_STK_LEAF);
	((struct lt_stack *)tbl_at(&t, LT_STK, (uint64_t)loop * 8))->parent = loop;
	empty = tbl_node(&t, outer, f, 0, 0);		/* no frames, a parent: a loop's way */
	e2 = tbl_node(&t, empty, f, 2, LT_STK_LEAF);
	big = tbl_node(&t, 0, f, 1000, 0);
	over = tbl_node(&t, big, f, 25, LT_STK_LEAF);	/* 1025 in all */
	late = tbl_node(&t, 0, f, 3, 0);
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_stack__words(&v, leaf, out, &d, &c), 0);
	assert_int_equal(d, 20);
	assert_int_equal(c, 0);
	assert_memory_equal(out, f, 20 * 8);
	assert_int_equal(lt_stack__words(&v, other, out, &d, &c), 0);
	assert_int_equal(d, 19);
	assert_memory_equal(out, f + 100, 3 * 8);
	assert_memory_equal(out + 3, f + 4, 16 * 8);
	assert_int_equal(lt_stack__words(&v, cut, out, &d, &c), 0);
	assert_int_equal(c, REC_CUT_DEPTH);
	assert_int_equal(lt_stack__words(&v, mid, out, &d, &c), 0);	/* an outer part is a stack too */
	assert_int_equal(d, 16);
	assert_int_equal(lt_stack__words(&v, loop, out, &d, &c), -EINVAL);
	assert_int_equal(lt_stack__words(&v, e2, out, &d, &c), -EINVAL);
	assert_int_equal(lt_stack__words(&v, over, out, &d, &c), -EINVAL);
	assert_int_equal(lt_stack__words(&v, 0, out, &d, &c), -EINVAL);
	/* A parent below its child but past its end, as a hostile writer may claim. */
	((struct lt_stack *)tbl_at(&t, LT_STK, (uint64_t)leaf * 8))->parent = late;
	assert_int_equal(lt_stack__words(&v, leaf, out, &d, &c), -EINVAL);
	((struct lt_stack *)tbl_at(&t, LT_STK, (uint64_t)leaf * 8))->parent = mid;
	/* An uncommitted parent: none. */
	((struct lt_stack *)tbl_at(&t, LT_STK, (uint64_t)outer * 8))->commit = 0;
	assert_int_equal(lt_stack__words(&v, leaf, out, &d, &c), -EINVAL);
	((struct lt_stack *)tbl_at(&t, LT_STK, (uint64_t)outer * 8))->commit = LT_STK_OK | 8;
	/* Past the mark: none, until the mark says it is written. */
	t.h->stk_used = (uint64_t)late * 8;
	assert_int_equal(lt_stack__words(&v, leaf, out, &d, &c), 0);
	assert_int_equal(lt_stack__words(&v, late, out, &d, &c), -EINVAL);
	/*
	 * A JOIN: its parent's chain, then its word's (an interpreter's
	 * stack: native frames, then its words); one naming a JOIN, one
	 * whose chain is past it or none, one of two words: none.
	 */
	t.h->stk_used = (uint64_t)late * 8 + 32;	/* late under the mark again, JOINs after it */
	{
		uint64_t w[1], two[2] = { other, leaf };
		uint32_t py = tbl_node(&t, 0, f + 200, 6, 0), jn, jj, jfar, j0, j2;

		w[0] = py;
		jn = tbl_node(&t, leaf, w, 1, LT_STK_LEAF | LT_STK_JOIN | REC_CUT_DEPTH << 16);
		assert_int_equal(lt_stack__words(&v, jn, out, &d, &c), 0);
		assert_int_equal(d, 26);
		assert_int_equal(c, REC_CUT_DEPTH);
		assert_memory_equal(out, f, 20 * 8);
		assert_memory_equal(out + 20, f + 200, 6 * 8);
		w[0] = jn;
		jj = tbl_node(&t, leaf, w, 1, LT_STK_LEAF | LT_STK_JOIN);
		assert_int_equal(lt_stack__words(&v, jj, out, &d, &c), -EINVAL);
		w[0] = jn + 1000;
		jfar = tbl_node(&t, leaf, w, 1, LT_STK_LEAF | LT_STK_JOIN);
		assert_int_equal(lt_stack__words(&v, jfar, out, &d, &c), -EINVAL);
		w[0] = 0;
		j0 = tbl_node(&t, leaf, w, 1, LT_STK_LEAF | LT_STK_JOIN);
		assert_int_equal(lt_stack__words(&v, j0, out, &d, &c), -EINVAL);
		j2 = tbl_node(&t, leaf, two, 2, LT_STK_LEAF | LT_STK_JOIN);
		assert_int_equal(lt_stack__words(&v, j2, out, &d, &c), -EINVAL);
		w[0] = big;
		jfar = tbl_node(&t, over, w, 1, LT_STK_LEAF | LT_STK_JOIN);	/* past 1024 in all */
		assert_int_equal(lt_stack__words(&v, jfar, out, &d, &c), -EINVAL);
	}
	/* The walk hands each over whole, the bad ones without a stack. */
	tbl_live(&t, 0, 0x1000, 1, leaf, 0);
	tbl_live(&t, 1, 0x2000, 2, other, 0);
	tbl_live(&t, 2, 0x3000, 3, loop, 0);
	tbl_live(&t, 3, 0x4000, 4, leaf, 0);
	tbl_live(&t, 4, 0x5000, 5, over, 0);
	assert_int_equal(lt_walk(&v, 0, 0, see, &s, &st), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(st.bad_stack, 2);
	assert_int_equal(s.depth[0], 20);
	assert_int_equal(s.last[0], f[19]);
	assert_int_equal(s.depth[1], 19);
	assert_int_equal(s.first[1], f[100]);
	assert_int_equal(s.depth[2], 0);
	assert_int_equal(s.depth[3], 20);
	free(t.base);
}

/*
 * Segments: a table whose later segments are memfds of their own (the
 * header says LT_SEG_OWN) holds nothing there until they are attached;
 * the slots and nodes in them are not there (the mark clamped to the
 * segments held), the missing ones counted; attached, all of it is.
 * Nodes go through PAD to the next segment.
 */
static void test_segments(void **state)
{
	struct lt_walk_stats st = { 0 };
	struct seen s = { 0 };
	struct lt_view v;
	struct lt_node nd;
	struct tbl t;
	uint64_t f[600], out[LT_MAX_DEPTH], off;
	uint32_t ids[8], d, c, n = 0, pads = 0;
	enum { NN = 8 };
	const void *ent1, *stk3;

	(void)state;
	for (uint32_t i = 0; i < 600; i++)
		f[i] = 0x600000 + i;
	tbl_new(&t);
	/* Nodes of 500 words (4008 bytes): one a segment at first, then 2, 4, ... */
	for (uint32_t i = 0; i < NN; i++)
		ids[i] = tbl_node(&t, 0, f + i, 500, LT_STK_LEAF);
	assert_true(ids[NN - 1] * 8ull >= lt_seg_start(3, 12));
	assert_true(ids[NN - 2] * 8ull < lt_seg_start(3, 12));
	tbl_live(&t, 1, 0x1000, 1, ids[0], 0);
	tbl_live(&t, 200, 0x2000, 2, ids[NN - 1], 0);	/* in the entries' segment 1 */
	ent1 = t.base + t.h->region[LT_ENT].seg[1];
	stk3 = t.base + t.h->region[LT_STK].seg[3];
	t.h->region[LT_ENT].seg[1] = LT_SEG_OWN;
	t.h->region[LT_STK].seg[3] = LT_SEG_OWN;
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_view__missing(&v), 2);
	assert_int_equal(lt_view__hwm(&v), 128);	/* the entries' segment 0 */
	assert_int_equal(lt_walk(&v, 0, 0, see, &s, &st), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(lt_stack__words(&v, ids[NN - 1], out, &d, &c), -EINVAL);
	/* The nodes in order, through the pads, up to the segment not held. */
	for (off = 8; lt_stack__next(&v, off, &nd) == 1; off = nd.next) {
		if (nd.commit == LT_STK_PAD)
			pads++;
		else
			assert_int_equal(nd.id, ids[n++]);
	}
	assert_int_equal(n, NN - 1);
	assert_int_equal(pads, 3);
	/* Attached: too short refused, held twice refused, then all of it. */
	assert_int_equal(lt_view__attach(&v, LT_ENT, 1, ent1, T_SEG0), -EINVAL);
	assert_int_equal(lt_view__attach(&v, LT_ENT, 1, ent1, 2 * T_SEG0), 0);
	assert_int_equal(lt_view__attach(&v, LT_ENT, 1, ent1, 2 * T_SEG0), -EEXIST);
	assert_int_equal(lt_view__attach(&v, LT_STK, 3, stk3, 8 * T_SEG0), 0);
	assert_int_equal(lt_view__attach(&v, LT_NREGIONS, 0, stk3, 8 * T_SEG0), -EINVAL);
	assert_int_equal(lt_view__missing(&v), 0);
	assert_int_equal(lt_view__hwm(&v), 201);
	s.n = 0;
	lt_walk(&v, 0, 0, see, &s, &st);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.depth[1], 500);
	assert_int_equal(s.first[1], f[NN - 1]);
	/* A segment placed past the buffer, or askew: the header lies. */
	t.h->region[LT_STK].seg[3] = t.size;
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	t.h->region[LT_STK].seg[3] = LT_HDR_SIZE + 8;
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	/* Placed later (a view kept while its writer runs): found by a refresh. */
	t.h->region[LT_STK].seg[3] = 0;
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_stack__words(&v, ids[NN - 1], out, &d, &c), -EINVAL);
	t.h->region[LT_STK].seg[3] = (uint64_t)((const char *)stk3 - t.base);
	lt_view__refresh(&v);
	assert_int_equal(lt_stack__words(&v, ids[NN - 1], out, &d, &c), 0);
	free(t.base);
}

static int mod_see(void *arg, const struct lt_mod *m)
{
	char *out = arg;

	strcat(out, m->path);
	strcat(out, ";");
	return 0;
}

static void test_modules(void **state)
{
	struct lt_view v;
	struct tbl t;
	char out[512] = "";
	struct lt_module *m;

	(void)state;
	tbl_new(&t);
	tbl_module(&t, 0x400000, "/bin/prog", 0);
	tbl_module(&t, 0x500000, "/lib/gone.so", 1);
	tbl_module(&t, 0x600000, "/lib/libc.so.6", 0);
	m = tbl_at(&t, LT_MOD, t.h->mod_used);
	tbl_module(&t, 0x700000, "/lib/torn.so", 0);
	tbl_module(&t, 0x800000, "/lib/after.so", 0);
	m->commit = 0;	/* the record being written when the writer stopped */
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	lt_modules(&v, mod_see, out);
	assert_string_equal(out, "/bin/prog;/lib/libc.so.6;");
	m->commit = (uint32_t)((sizeof(*m) + strlen("/lib/torn.so") + 1 + 7) & ~7ul);
	/* A path with no end inside its record, a build ID with none: cut, kept in bounds. */
	m->commit = (uint32_t)((sizeof(*m) + 16 + 7) & ~7ul);
	memset(m->path, 'x', 64);
	memset(m->build_id, 'a', sizeof(m->build_id));
	out[0] = '\0';
	lt_modules(&v, mod_see, out);
	assert_true(strlen(out) < 512);
	assert_non_null(strstr(out, "xxxxxxxxx"));
	/* A build ID that is not hex would break its line: the record is left out. */
	m->build_id[3] = '\t';
	out[0] = '\0';
	lt_modules(&v, mod_see, out);
	assert_null(strstr(out, "xxxxxxxxx"));
	free(t.base);
	/* Records past segment 0's end, through its PAD; none past the segments held. */
	tbl_new(&t);
	for (int i = 0; i < 40; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/lib/m%02d.so", i);
		tbl_module(&t, 0x400000 + 0x10000 * (uint64_t)i, path, 0);
	}
	assert_true(t.h->mod_used > T_SEG0);
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	out[0] = '\0';
	lt_modules(&v, mod_see, out);
	assert_non_null(strstr(out, "/lib/m00.so;"));
	assert_non_null(strstr(out, "/lib/m39.so;"));
	t.h->region[LT_MOD].seg[1] = LT_SEG_OWN;
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	out[0] = '\0';
	lt_modules(&v, mod_see, out);
	assert_non_null(strstr(out, "/lib/m00.so;"));
	assert_null(strstr(out, "/lib/m39.so;"));
	free(t.base);
}

static void test_hostile_header(void **state)
{
	struct lt_view v;
	struct tbl t;
	struct lt_header keep;

	(void)state;
	tbl_new(&t);
	keep = *t.h;
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_view__open(&v, t.base, LT_HDR_SIZE - 1), -EINVAL);
	t.h->magic++;
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	assert_int_equal(lt_view__version(t.base, t.size), 0);
	*t.h = keep;
	t.h->version = 2;		/* another version: said as one */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EPROTO);
	assert_int_equal(lt_view__version(t.base, t.size), 2);
	*t.h = keep;
	t.h->entry_size = 16;
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->region[LT_ENT].seg[1] = t.size - T_SEG0;	/* past the mapping */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->region[LT_STK].seg[0] = UINT64_MAX - 4095;	/* wraps */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->region[LT_ENT].seg[0] += 8;	/* misaligned */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->region[LT_MOD].seg[0] = 4096 - 4096;	/* over the header: 0 is "not made" */
	t.h->region[LT_MOD].seg[1] = 2;		/* over the header */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	for (uint64_t bad = 0; bad < 4; bad++) {
		static const uint64_t seg0[] = { 0, 2048, 4096 + 8, 1ull << 31 };

		*t.h = keep;
		t.h->region[LT_STK].seg0 = seg0[bad];	/* not a power of two from 4 KiB to 1 GiB */
		assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	}
	/* Marks past their regions are clamped, never followed. */
	*t.h = keep;
	t.h->ent_hwm = UINT64_MAX;
	t.h->stk_used = UINT64_MAX;
	t.h->mod_used = UINT64_MAX;
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_view__hwm(&v), 3 * T_SEG0 / sizeof(struct lt_entry));
	free(t.base);
}

/* A dump of the hand-made table read back: the lines parse, the tokens decode. */
static void test_dump(void **state)
{
	static struct lt_out o;
	struct lt_snap s, *sp = &s;
	struct lt_view v;
	struct tbl t;
	FILE *tmp = tmpfile();
	static char line[65536], want[65536], run[REC_TOKENS_BUF];
	static uint64_t deep[LT_MAX_DEPTH], back[LT_MAX_DEPTH];
	int lives = 0, maps = 0, ends = 0;
	uint32_t d65, d1024;

	(void)state;
	for (uint32_t i = 0; i < LT_MAX_DEPTH; i++)
		deep[i] = 0x7f0000002000 + i * 0x11;
	tbl_new(&t);
	tbl_module(&t, 0x400000, "/bin/prog", 0);
	tbl_live(&t, 0, 0x1000, 10, tbl_stack(&t, F, 4, 0), 0);
	tbl_live(&t, 1, 0x2000, 20, tbl_stack(&t, F, 2, REC_CUT_DEPTH), 0);
	/* Deep stacks, each for two blocks (encoded once for the run). */
	d65 = tbl_stack(&t, deep, 65, 0);
	d1024 = tbl_stack(&t, deep, LT_MAX_DEPTH, REC_CUT_DEPTH);
	tbl_live(&t, 2, 0x3000, 30, d65, 0);
	tbl_live(&t, 3, 0x3100, 31, d65, 0);
	tbl_live(&t, 4, 0x4000, 40, d1024, 0);
	tbl_live(&t, 5, 0x4100, 41, d1024, 0);
	t.h->sample_bytes = 4096;
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_snap__take(&s, &v, 321), 0);
	assert_int_equal(s.n, 6);
	lt_out__init(&o, fileno(tmp));
	assert_int_equal(lt_out__dump(&o, &sp, 1, "usr1", 4096), 0);
	assert_int_equal(lt_out__exit(&o, &s, "hand"), 0);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp)) {
		struct record r;
		struct hs_record rec;
		uint64_t size;
		uint32_t depth;

		assert_int_equal(records__parse(line, &r), 0);
		switch (r.type) {
		case REC_DUMP:
			assert_string_equal(r.reason, "usr1");
			assert_int_equal(r.live, 6);
			assert_int_equal(r.sample_bytes, 4096);
			assert_true(r.bytes > 30);	/* estimated */
			break;
		case REC_MAP:
			assert_int_equal(r.pid, 321);
			assert_int_equal(r.start, 0x400000);
			maps++;
			break;
		case REC_LIVE:
			lives++;
			if (r.ptr >= 0x3000) {
				/* records/ writes the same line, and reads back every frame. */
				uint32_t want_depth = r.ptr < 0x4000 ? 65 : LT_MAX_DEPTH;
				uint64_t want_size = (r.ptr >> 12) * 10 + (r.ptr >> 8 & 1);
				FILE *f = fmemopen(want, sizeof(want), "w");
				struct record w = { .type = REC_LIVE, .pid = 321, .ptr = r.ptr,
						    .cut = want_depth == 65 ? 0 : REC_CUT_DEPTH,
						    .depth = want_depth, .token = run };

				w.token_len = (size_t)records__tokens(deep, want_depth, want_size, run,
								      sizeof(run));
				assert_non_null(f);
				assert_int_equal(records__write(f, &w), 0);
				fputc('\0', f);
				fclose(f);
				assert_string_equal(line, want);
				assert_int_equal(r.depth, want_depth);
				assert_int_equal(records__stack(&r, &size, back, &depth), 0);
				assert_int_equal(depth, want_depth);
				assert_memory_equal(back, deep, depth * 8);
				assert_int_equal(size, want_size);
				break;
			}
			assert_int_equal(hs_token_decode(r.token + 3, r.token_len - 3, &rec), 0);
			assert_int_equal(rec.size, r.ptr == 0x1000 ? 10 : 20);
			assert_int_equal(rec.depth, r.ptr == 0x1000 ? 4 : 2);
			assert_memory_equal(rec.frames, F, rec.depth * 8);
			assert_int_equal(r.cut, r.ptr == 0x1000 ? 0 : REC_CUT_DEPTH);
			break;
		case REC_EXIT:
			assert_string_equal(r.comm, "hand\n");
			/* fall through */
		case REC_END_DUMP:
		case REC_END_EXIT:
			assert_int_equal(r.live, 6);
			ends++;
			break;
		default:
			fail();
		}
	}
	assert_int_equal(lives, 12);
	assert_int_equal(maps, 2);
	assert_int_equal(ends, 3);
	lt_snap__free(&s);
	fclose(tmp);
	free(t.base);
}

/* --- the torture ---------------------------------------------------------- */

#define W_SLOTS 8

static struct tbl tt;
static int writers_done;
static int rounds = 10000000;	/* ~1 s here; the control finds torn entries in as many */

/*
 * Writer @w owns slots w*8 .. w*8+7: it publishes and frees six of them
 * in turn, and moves one block between the other two as the preload's
 * realloc does (new entry linked to the old, old freed, link cleared):
 * exactly one of them is the block at any time.
 */
static void *writer(void *arg)
{
	uint32_t w = (uint32_t)(uintptr_t)arg, lo = w * W_SLOTS, cur = lo;
	uint64_t k = ((uint64_t)w + 1) << 40;

	++k;
	lt_entry_publish(tbl_ent(&tt, cur), k, k * 3, (uint32_t)(k >> 4 & 0xffff), (uint32_t)(k & 0xffff),
			 0);
	for (int r = 0; r < rounds; r++) {
		uint32_t next = cur == lo ? lo + 1 : lo;

		for (uint32_t s = lo + 2; s < lo + W_SLOTS; s++) {
			++k;
			lt_entry_publish(tbl_ent(&tt, s), k, k * 3, (uint32_t)(k >> 4 & 0xffff),
					 (uint32_t)(k & 0xffff), 0);
			lt_entry_free(tbl_ent(&tt, s));
		}
		++k;
		lt_entry_publish(tbl_ent(&tt, next), k, k * 3, (uint32_t)(k >> 4 & 0xffff),
				 (uint32_t)(k & 0xffff), cur + 1);
		lt_entry_free(tbl_ent(&tt, cur));
		lt_entry_unlink(tbl_ent(&tt, next));
		cur = next;
	}
	__atomic_fetch_add(&writers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct tally {
	uint64_t torn;
};

/* size and tid are tied to addr: the fields of two publications differ. */
static int look(void *arg, const struct lt_live *l)
{
	struct tally *t = arg;

	if (l->size != l->addr * 3 || l->tid != (uint32_t)(l->addr & 0xffff))
		t->torn++;
	return 0;
}

static void test_torture(void **state)
{
	enum { NW = 3 };
	pthread_t th[NW];
	struct lt_walk_stats st = { 0 };
	struct lt_view v;
	struct tally tl = { 0 };
	uint64_t walks = 0;

	(void)state;
	tbl_new(&tt);
	tt.h->ent_hwm = T_SLOTS;
	/* the first publication of each writer's mover precedes the walks */
	for (int w = 0; w < NW; w++)
		assert_int_equal(pthread_create(&th[w], NULL, writer, (void *)(uintptr_t)w), 0);
	assert_int_equal(lt_view__open(&v, tt.base, tt.size), 0);
	while (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) < NW) {
		lt_walk(&v, 0, 0, look, &tl, &st);
		walks++;
	}
	for (int w = 0; w < NW; w++)
		pthread_join(th[w], NULL);
	print_message("torture: %llu walks, %llu entries handed over, %llu read again, %llu "
		      "realloc links followed, %llu torn\n", (unsigned long long)walks,
		      (unsigned long long)st.live, (unsigned long long)st.retries,
		      (unsigned long long)st.linked, (unsigned long long)tl.torn);
	assert_int_equal(tl.torn, 0);
	assert_true(walks > 100);
	free(tt.base);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_hostile_header),
		cmocka_unit_test(test_dump),
	};
	const struct CMUnitTest torture[] = {
		cmocka_unit_test(test_torture),
	};

	/* --seed FILE: the hand-made table of test_dump, for the fuzzer's seeds. */
	if (argc > 2 && !strcmp(argv[1], "--seed")) {
		struct tbl t;
		FILE *f = fopen(argv[2], "w");

		static uint64_t big[500];
		uint32_t outer, leaf;

		tbl_new(&t);
		tbl_module(&t, 0x400000, "/bin/prog", 0);
		tbl_module(&t, 0x500000, "/lib/gone.so", 1);
		tbl_live(&t, 0, 0x1000, 10, tbl_stack(&t, F, 4, 0), 0);
		tbl_live(&t, 1, 0x2000, 20, tbl_stack(&t, F, 2, REC_CUT_DEPTH), 0);
		tbl_live(&t, 2, 0x3000, 30, 0, 0);
		tbl_live(&t, 3, 0x4000, 40, 2, 1 + 0);
		/* Stacks of two nodes, one of them past a PAD in segment 1; a slot in segment 1. */
		outer = tbl_node(&t, 0, F + 2, 2, 0);
		leaf = tbl_node(&t, outer, F, 2, LT_STK_LEAF);
		tbl_live(&t, 4, 0x5000, 50, leaf, 0);
		tbl_node(&t, 0, big, 450, 0);
		leaf = tbl_node(&t, outer, big, 60, LT_STK_LEAF);
		tbl_live(&t, 130, 0x6000, 60, leaf, 0);
		int bad = !f || fwrite(t.base, t.size, 1, f) != 1 || fclose(f);

		free(t.base);
		return bad;
	}
	/* --torture [ROUNDS]: only the torture (built without sanitizers, at speed). */
	if (argc > 1 && !strcmp(argv[1], "--torture")) {
		if (argc > 2)
			rounds = atoi(argv[2]);
		return cmocka_run_group_tests(torture, NULL, NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}

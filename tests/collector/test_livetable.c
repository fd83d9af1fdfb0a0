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
#include "livetable.h"
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
	for (uint32_t depth = 32; depth <= REC_MAX_DEPTH; depth += 331) {
		static char run[REC_TOKENS_BUF];
		uint64_t frames[REC_MAX_DEPTH];
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

#define T_MOD 4096
#define T_STK 32768	/* room for a stack of LT_MAX_DEPTH + 1 frames and more */
#define T_SLOTS 64

struct tbl {
	char *base;
	uint64_t size;
	struct lt_header *h;
	struct lt_entry *ent;
};

static void tbl_new(struct tbl *t)
{
	t->size = LT_HDR_SIZE + T_MOD + T_STK + T_SLOTS * sizeof(struct lt_entry);
	t->base = aligned_alloc(4096, (t->size + 4095) & ~4095ul);
	assert_non_null(t->base);
	memset(t->base, 0, t->size);
	t->h = (struct lt_header *)t->base;
	*t->h = (struct lt_header){ .magic = LT_MAGIC, .version = LT_VERSION,
		.entry_size = sizeof(struct lt_entry), .pid = 99, .mod_off = LT_HDR_SIZE,
		.mod_cap = T_MOD, .stk_off = LT_HDR_SIZE + T_MOD, .stk_cap = T_STK,
		.ent_off = LT_HDR_SIZE + T_MOD + T_STK, .ent_cap = T_SLOTS * sizeof(struct lt_entry),
		.stk_used = 8, .comm = "hand" };
	t->ent = (struct lt_entry *)(t->base + t->h->ent_off);
}

/* A committed stack of @depth frames (@f), cut bits @cut: its id. */
static uint32_t tbl_stack(struct tbl *t, const uint64_t *f, uint32_t depth, uint32_t cut)
{
	uint64_t off = t->h->stk_used;
	struct lt_stack *s = (struct lt_stack *)(t->base + t->h->stk_off + off);

	memcpy(s->frames, f, depth * 8);
	s->commit = LT_STK_OK | cut << 16 | depth;
	t->h->stk_used = off + sizeof(*s) + depth * 8;
	return (uint32_t)(off / 8);
}

static void tbl_module(struct tbl *t, uint64_t start, const char *path, uint32_t gone)
{
	size_t plen = strlen(path) + 1;
	uint32_t len = (uint32_t)((sizeof(struct lt_module) + plen + 7) & ~7ul);
	struct lt_module *m = (struct lt_module *)(t->base + t->h->mod_off + t->h->mod_used);

	m->start = start;
	m->end = start + 0x1000;
	m->off = 0x2000;
	strcpy(m->build_id, "abcdef");
	memcpy(m->path, path, plen);
	m->gone = gone;
	m->commit = len;
	t->h->mod_used += len;
}

static void tbl_live(struct tbl *t, uint32_t slot, uint64_t addr, uint64_t size, uint32_t stack,
		     uint32_t link)
{
	lt_entry_publish(&t->ent[slot], addr, size, stack, 1, link);
	if (t->h->ent_hwm <= slot)
		t->h->ent_hwm = slot + 1;
}

struct seen {
	uint64_t addr[T_SLOTS], size[T_SLOTS];
	uint32_t depth[T_SLOTS], cut[T_SLOTS], n;
};

static int see(void *arg, const struct lt_live *l)
{
	struct seen *s = arg;

	s->addr[s->n] = l->addr;
	s->size[s->n] = l->size;
	s->depth[s->n] = l->depth;
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
	uint64_t many[LT_MAX_DEPTH + 1] = { 0 };

	(void)state;
	tbl_new(&t);
	a = tbl_stack(&t, F, 4, 0);
	b = tbl_stack(&t, F, 2, REC_CUT_DEPTH | REC_CUT_UNREADABLE);
	deep = tbl_stack(&t, many, LT_MAX_DEPTH + 1, 0);	/* deeper than a record: refused */
	full = tbl_stack(&t, many, LT_MAX_DEPTH, REC_CUT_DEPTH);	/* a record's 1024: kept */
	tbl_live(&t, 0, 0x1000, 10, a, 0);
	tbl_live(&t, 1, 0x2000, 20, b, 0);
	tbl_live(&t, 2, 0x3000, 30, 0, 0);		/* no stack: written without one */
	tbl_live(&t, 3, 0x4000, 40, 9999, 0);		/* outside the stacks */
	tbl_live(&t, 4, 0x5000, 50, deep, 0);
	tbl_live(&t, 5, 0x6000, 60, a, 0);
	lt_entry_free(&t.ent[5]);			/* freed: not live */
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
	assert_int_equal(s.cut[1], REC_CUT_DEPTH | REC_CUT_UNREADABLE);
	assert_int_equal(s.depth[2], 0);
	assert_int_equal(s.depth[3], 0);	/* a bad stack: none */
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
	((struct lt_stack *)(t.base + t.h->stk_off + (uint64_t)a * 8))->commit = 0;
	memset(&st, 0, sizeof(st));
	s.n = 0;
	lt_walk(&v, 0, 0, see, &s, &st);
	assert_int_equal(st.bad_stack, 2 + 5);
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
	m = (struct lt_module *)(t.base + t.h->mod_off + t.h->mod_used);
	tbl_module(&t, 0x700000, "/lib/torn.so", 0);
	tbl_module(&t, 0x800000, "/lib/after.so", 0);
	m->commit = 0;	/* the record being written when the writer stopped */
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	lt_modules(&v, mod_see, out);
	assert_string_equal(out, "/bin/prog;/lib/libc.so.6;");
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
	*t.h = keep;
	t.h->entry_size = 16;
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->ent_cap = t.size;		/* past the mapping */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->stk_off = UINT64_MAX - 8;	/* wraps */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->ent_off += 8;		/* misaligned */
	t.h->ent_cap -= 32;
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	*t.h = keep;
	t.h->mod_off = 0;		/* over the header */
	assert_int_equal(lt_view__open(&v, t.base, t.size), -EINVAL);
	/* Marks past their regions are clamped, never followed. */
	*t.h = keep;
	t.h->ent_hwm = UINT64_MAX;
	t.h->stk_used = UINT64_MAX;
	t.h->mod_used = UINT64_MAX;
	assert_int_equal(lt_view__open(&v, t.base, t.size), 0);
	assert_int_equal(lt_view__hwm(&v), T_SLOTS);
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
	static uint64_t deep[REC_MAX_DEPTH], back[REC_MAX_DEPTH];
	int lives = 0, maps = 0, ends = 0;
	uint32_t d65, d1024;

	(void)state;
	for (uint32_t i = 0; i < REC_MAX_DEPTH; i++)
		deep[i] = 0x7f0000002000 + i * 0x11;
	tbl_new(&t);
	tbl_module(&t, 0x400000, "/bin/prog", 0);
	tbl_live(&t, 0, 0x1000, 10, tbl_stack(&t, F, 4, 0), 0);
	tbl_live(&t, 1, 0x2000, 20, tbl_stack(&t, F, 2, REC_CUT_DEPTH), 0);
	/* Deep stacks, each for two blocks (encoded once for the run). */
	d65 = tbl_stack(&t, deep, 65, 0);
	d1024 = tbl_stack(&t, deep, REC_MAX_DEPTH, REC_CUT_DEPTH);
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
				uint32_t want_depth = r.ptr < 0x4000 ? 65 : REC_MAX_DEPTH;
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
	lt_entry_publish(&tt.ent[cur], k, k * 3, (uint32_t)(k >> 4 & 0xffff), (uint32_t)(k & 0xffff),
			 0);
	for (int r = 0; r < rounds; r++) {
		uint32_t next = cur == lo ? lo + 1 : lo;

		for (uint32_t s = lo + 2; s < lo + W_SLOTS; s++) {
			++k;
			lt_entry_publish(&tt.ent[s], k, k * 3, (uint32_t)(k >> 4 & 0xffff),
					 (uint32_t)(k & 0xffff), 0);
			lt_entry_free(&tt.ent[s]);
		}
		++k;
		lt_entry_publish(&tt.ent[next], k, k * 3, (uint32_t)(k >> 4 & 0xffff),
				 (uint32_t)(k & 0xffff), cur + 1);
		lt_entry_free(&tt.ent[cur]);
		lt_entry_unlink(&tt.ent[next]);
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

		tbl_new(&t);
		tbl_module(&t, 0x400000, "/bin/prog", 0);
		tbl_module(&t, 0x500000, "/lib/gone.so", 1);
		tbl_live(&t, 0, 0x1000, 10, tbl_stack(&t, F, 4, 0), 0);
		tbl_live(&t, 1, 0x2000, 20, tbl_stack(&t, F, 2, REC_CUT_DEPTH), 0);
		tbl_live(&t, 2, 0x3000, 30, 0, 0);
		tbl_live(&t, 3, 0x4000, 40, 2, 1 + 0);
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

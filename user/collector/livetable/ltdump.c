// SPDX-License-Identifier: MIT
/*
 * ltdump.c - a live table written out as heapsnoop's records (see
 * livedump.h): its live set copied out by one walk (each block's stack
 * by id), then the dump's lines from the copy, each stack rebuilt from
 * the table's nodes and its `~m#` tokens made by the codec (once for a
 * run of blocks of the same stack; a stack deeper than one token's 31
 * frames says depth= and goes on in continuation tokens,
 * docs/OUTPUT.md). The
 * lines are ltfmt.c's; the order and the totals docs/OUTPUT.md's (every
 * `map` line of a dump before its first `live` line). Async-signal-safe.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "heapsnoop/codec.h"
#include "ltfmt.h"
#include "sampling.h"

/*
 * The bytes a block of @size stands for: sample_estimate()'s, about
 * size + mean at most, kept below its overflow (a table may claim any
 * size and mean; none of 2^62 was ever real).
 */
static uint64_t estimate(uint64_t size, uint64_t sample)
{
	if (!sample || size >= (1ull << 62) || sample >= (1ull << 62))
		return size;
	return sample_estimate(size, sample);
}

struct take_ctx {
	struct lt_snap *s;
	uint64_t cap, sample;
};

static int take_one(void *arg, const struct lt_live *l)
{
	struct take_ctx *c = arg;

	if (c->s->n == c->cap)
		return 1;	/* more live than slots a moment ago: a changing writer */
	c->s->items[c->s->n++] = (struct lt_item){ .addr = l->addr, .size = l->size,
		.depth = l->depth, .cut = l->cut, .stack = l->stack };
	c->s->bytes += estimate(l->size, c->sample);
	return 0;
}

int lt_snap__take(struct lt_snap *s, const struct lt_view *v, int pid)
{
	struct take_ctx c = { .s = s, .sample = __atomic_load_n(&v->h->sample_bytes, __ATOMIC_RELAXED) };
	uint64_t hwm = lt_view__hwm(v);
	void *p;

	memset(s, 0, sizeof(*s));
	s->v = v;
	s->pid = pid;
	c.cap = hwm ? hwm : 1;
	s->map_len = (c.cap * sizeof(struct lt_item) + 4095) & ~(size_t)4095;
	p = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED) {
		s->map_len = 0;
		return -ENOMEM;
	}
	s->items = p;
	lt_walk(v, 0, hwm, take_one, &c, &s->st);
	return 0;
}

void lt_snap__free(struct lt_snap *s)
{
	if (s->map_len)
		munmap(s->items, s->map_len);
	s->items = NULL;
	s->map_len = 0;
	s->n = 0;
}

struct map_ctx {
	struct lt_out *o;
	int pid;
};

static int write_map(void *arg, const struct lt_mod *m)
{
	struct map_ctx *c = arg;
	struct record r = { .type = REC_MAP, .pid = c->pid, .start = m->start, .end = m->end,
			    .off = m->off, .path = m->path };

	memcpy(r.build_id, m->build_id, sizeof(r.build_id));
	ltfmt__record(c->o, &r);
	return 0;
}

/*
 * @s's `map` records, and the thread boundary's `frame` record where its
 * stacks may hold it (livetable.h's creators).
 */
static void write_maps(struct lt_out *o, const struct lt_snap *s)
{
	struct map_ctx c = { .o = o, .pid = s->pid };

	lt_modules(s->v, write_map, &c);
	if (__atomic_load_n(&s->v->h->creators, __ATOMIC_ACQUIRE))
		ltfmt__creator_frame(o, s->pid);
}

/*
 * The continuation tokens of the stack @frames[@depth] (HS_MAX_DEPTH <
 * @depth <= LT_MAX_DEPTH), " ~m#B[ ~m#C...]", into @out (@cap bytes,
 * LT_TAIL_BUF always enough): records__tail_tokens()'s bytes, which
 * user/common/records/rectoken.c makes with the same codec call, here
 * without records/ (stdio, not in the preload). Returns the length or a
 * negative hs_err.
 */
static int tail_tokens(const uint64_t *frames, uint32_t depth, char *out, size_t cap)
{
	size_t pos = 0;

	for (uint32_t i = HS_MAX_DEPTH; i < depth; i += HS_MAX_DEPTH) {
		struct hs_record rec = { .size = 0, .depth = depth - i };
		int n;

		if (rec.depth > HS_MAX_DEPTH)
			rec.depth = HS_MAX_DEPTH;
		memcpy(rec.frames, frames + i, rec.depth * sizeof(*frames));
		if (cap - pos < 2)
			return -HS_ENOSPC;
		out[pos] = ' ';
		n = hs_token_encode(&rec, out + pos + 1, cap - pos - 1);
		if (n < 0)
			return n;
		pos += 1 + (size_t)n;
	}
	return (int)pos;
}

/*
 * Every live line of @s; a stack's words (rebuilt from its nodes into
 * o->words), bits (its first 31 frames) and a deep one's continuation
 * tokens (in o->tail) are made once for a run of it.
 */
static void write_lives(struct lt_out *o, const struct lt_snap *s)
{
	struct hs_stack_bits sb;
	const uint64_t *frames = NULL;
	uint32_t sb_id = 0, depth = 0, cut = 0;
	int sb_err = 0, tail_len = 0;

	for (uint64_t i = 0; i < s->n; i++) {
		const struct lt_item *it = &s->items[i];
		struct record r = { .type = REC_LIVE, .pid = s->pid, .ptr = it->addr };
		char tok[HS_TOKEN_BUF];
		int n;

		if (!it->stack || it->stack != sb_id) {
			const uint64_t *x;

			frames = o->words;
			depth = 0;
			cut = it->cut;
			/* A stack the walk rebuilt whole: again (its nodes never change). */
			if (it->stack && lt_stack__words(s->v, it->stack, o->words, &depth, &cut))
				depth = 0;
			/* heapsnoop --preload: interpreter frames named (the same for a stack id). */
			if (o->xlate && it->stack &&
			    (x = o->xlate(o->xarg, s, it->stack, o->words, &depth, &cut)))
				frames = x;
			sb_err = hs_stack_bits_encode(frames, depth > HS_MAX_DEPTH ? HS_MAX_DEPTH : depth,
						      &sb);
			tail_len = 0;
			if (!sb_err && depth > HS_MAX_DEPTH) {
				tail_len = tail_tokens(frames, depth, o->tail, sizeof(o->tail));
				sb_err = tail_len < 0 ? tail_len : 0;
			}
			sb_id = sb_err ? 0 : it->stack;
		}
		r.cut = cut;
		n = sb_err ? sb_err : hs_token_encode_stack(&sb, it->size, tok, sizeof(tok));
		if (n < 0) {
			r.size = it->size;
			r.error = hs_strerror(n);
		} else {
			r.token = tok;
			r.token_len = (size_t)n;
			if (depth > HS_MAX_DEPTH) {
				r.depth = depth;
				r.tail = o->tail;
				r.tail_len = (size_t)tail_len;
			}
		}
		ltfmt__record(o, &r);
	}
}

static void now(struct record *r)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	r->time_s = t.tv_sec;
	r->time_ms = (uint32_t)(t.tv_nsec / 1000000);
}

int lt_out__dump(struct lt_out *o, struct lt_snap *const *s, size_t n, const char *reason,
		 uint64_t sample)
{
	struct record r = { .type = REC_DUMP, .sample_bytes = sample };
	size_t k = strlen(reason);

	now(&r);
	memcpy(r.reason, reason, k < sizeof(r.reason) ? k : sizeof(r.reason) - 1);
	for (size_t i = 0; i < n; i++) {
		r.live += s[i]->n;
		r.bytes += s[i]->bytes;
	}
	/* stacks=0: the table's stacks are not counted per dump (docs/OUTPUT.md). */
	ltfmt__record(o, &r);
	for (size_t i = 0; i < n; i++)
		write_maps(o, s[i]);
	for (size_t i = 0; o->names && i < n; i++)
		o->names(o->xarg, o, s[i]);
	for (size_t i = 0; i < n; i++)
		write_lives(o, s[i]);
	r = (struct record){ .type = REC_END_DUMP, .live = r.live };
	ltfmt__record(o, &r);
	return lt_out__flush(o);
}

int lt_out__exit(struct lt_out *o, const struct lt_snap *s, const char *comm)
{
	struct record r = { .type = REC_EXIT, .pid = s->pid, .live = s->n, .bytes = s->bytes,
			    .comm = comm };

	now(&r);
	ltfmt__record(o, &r);
	write_maps(o, s);
	if (o->names)
		o->names(o->xarg, o, s);
	write_lives(o, s);
	r = (struct record){ .type = REC_END_EXIT, .pid = s->pid, .live = s->n };
	ltfmt__record(o, &r);
	return lt_out__flush(o);
}

// SPDX-License-Identifier: MIT
/*
 * ltdump.c - a live table written out as heapsnoop's records (see
 * livedump.h): its live set copied out by one walk, then the dump's
 * lines from the copy, each stack's `~m#` token made by the codec from
 * the table's frames (once for a run of blocks of the same stack). The
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
		.frames = l->frames, .depth = l->depth, .cut = l->cut, .stack = l->stack };
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

static void write_maps(struct lt_out *o, const struct lt_snap *s)
{
	struct map_ctx c = { .o = o, .pid = s->pid };

	lt_modules(s->v, write_map, &c);
}

/* Every live line of @s; a stack's bits are encoded once for a run of it. */
static void write_lives(struct lt_out *o, const struct lt_snap *s)
{
	struct hs_stack_bits sb;
	uint32_t sb_id = 0;
	int sb_err = 0;

	for (uint64_t i = 0; i < s->n; i++) {
		const struct lt_item *it = &s->items[i];
		struct record r = { .type = REC_LIVE, .pid = s->pid, .ptr = it->addr, .cut = it->cut };
		char tok[HS_TOKEN_BUF];
		int n;

		if (!it->stack || it->stack != sb_id) {
			sb_err = hs_stack_bits_encode(it->frames, it->frames ? it->depth : 0, &sb);
			sb_id = sb_err ? 0 : it->stack;
		}
		n = sb_err ? sb_err : hs_token_encode_stack(&sb, it->size, tok, sizeof(tok));
		if (n < 0) {
			r.size = it->size;
			r.error = hs_strerror(n);
		} else {
			r.token = tok;
			r.token_len = (size_t)n;
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
	write_lives(o, s);
	r = (struct record){ .type = REC_END_EXIT, .pid = s->pid, .live = s->n };
	ltfmt__record(o, &r);
	return lt_out__flush(o);
}

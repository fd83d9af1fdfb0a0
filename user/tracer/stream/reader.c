// SPDX-License-Identifier: MIT
/*
 * reader.c - the ring buffer's records and the per-CPU logs' frees, in
 * the order they were made. See reader.h.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "freelog.h"
#include "heapsnoop/event.h"
#include "msg.h"
#include "reader.h"
#include "ringpos.h"

struct reader {
	struct ring_buffer *rb;
	struct ringpos *rp;
	struct freelog *fl;	/* NULL: every free is in the ring */
	reader_fn fn;
	void *ctx;
	uint64_t limit;		/* ring records at or above it wait */
	/* The ring record read at or above the limit, copied: the next one. */
	void *held;
	size_t held_len, held_cap;
	uint64_t held_pos;
	bool have_held;
	int err;		/* @fn's, which stopped the ring's reading */
	int handed;		/* ring records handed over in this drain */
	struct hs_event free_ev;	/* a logged free as a record: its first fields */
};

/* The logged frees that belong before sequence @seq, in order. */
static int hand_frees(struct reader *r, uint64_t seq)
{
	struct hs_free_entry e;

	while (r->fl && freelog__next(r->fl, seq, &e)) {
		int err;

		r->free_ev.pid = (__u32)(e.id >> 32);
		r->free_ev.tid = (__u32)e.id;
		r->free_ev.addr = e.addr;
		err = r->fn(r->ctx, &r->free_ev, HS_EVENT_FREE_SIZE, e.stamp);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Ring record @data at position @pos, after the frees before it. */
static int hand(struct reader *r, const void *data, size_t len, uint64_t pos)
{
	int err = hand_frees(r, pos + 1);

	if (err < 0)
		return err;
	r->handed++;
	return r->fn(r->ctx, data, len, pos + 1);
}

static int keep(struct reader *r, const void *data, size_t len, uint64_t pos)
{
	if (len > r->held_cap) {
		void *p = realloc(r->held, len);

		if (!p)
			return -ENOMEM;
		r->held = p;
		r->held_cap = len;
	}
	memcpy(r->held, data, len);
	r->held_len = len;
	r->held_pos = pos;
	r->have_held = true;
	return 0;
}

/*
 * libbpf's callback. It consumes the record it hands over whatever this
 * returns, so a record at or above the limit is copied and kept.
 */
static int on_sample(void *ctx, void *data, size_t len)
{
	struct reader *r = ctx;
	uint64_t pos = ringpos__of(r->rp, data);
	int err;

	if (pos == UINT64_MAX) {
		elog("a record lies outside the ring buffer's data area as heapsnoop expects "
		     "libbpf to map it: records cannot be ordered (please report this with "
		     "heapsnoop -V and libbpf's version)");
		return r->err = -EPROTO;
	}
	if (pos >= r->limit) {
		err = keep(r, data, len, pos);
		return err ? (r->err = err) : -EAGAIN;
	}
	err = hand(r, data, len, pos);
	return err < 0 ? (r->err = err) : 0;
}

int reader__open(int ring_fd, size_t ring_size, int logs_fd, unsigned int ncpus,
		 reader_fn fn, void *ctx, struct reader **out)
{
	struct reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->fn = fn;
	r->ctx = ctx;
	r->limit = UINT64_MAX;
	r->free_ev.type = HS_EV_FREE;
	r->free_ev.func = HS_FN_FREE;
	err = ringpos__open(ring_fd, ring_size, &r->rp);
	if (!err && logs_fd >= 0)
		err = freelog__open(logs_fd, ncpus, &r->fl);
	if (!err) {
		r->rb = ring_buffer__new(ring_fd, on_sample, r, NULL);
		if (!r->rb)
			err = -errno;
	}
	if (err) {
		reader__free(r);
		return err;
	}
	*out = r;
	return 0;
}

int reader__drain(struct reader *r)
{
	uint64_t next;
	int err, n;

	r->handed = 0;
	r->err = 0;
	if (r->fl)
		r->limit = freelog__collect(r->fl, ringpos__head(r->rp));
	if (r->have_held) {
		if (r->held_pos >= r->limit)
			goto frees;
		r->have_held = false;
		err = hand(r, r->held, r->held_len, r->held_pos);
		if (err < 0)
			return err;
	}
	/* Stopped by a record kept (-EAGAIN), by @fn, or failed itself. */
	n = ring_buffer__consume(r->rb);
	if (n < 0 && (r->err || !r->have_held))
		return r->err ? r->err : n;
frees:
	/* The first ring record not handed over lies at @next. */
	next = r->have_held ? r->held_pos : ringpos__tail(r->rp);
	err = hand_frees(r, next + 1);
	return err < 0 ? err : r->handed;
}

int reader__epoll_fd(const struct reader *r)
{
	return ring_buffer__epoll_fd(r->rb);
}

uint64_t reader__head(const struct reader *r)
{
	return ringpos__head(r->rp);
}

uint64_t reader__backlog(const struct reader *r)
{
	return ringpos__backlog(r->rp);
}

uint64_t reader__logged_frees(const struct reader *r)
{
	return r->fl ? freelog__taken(r->fl) : 0;
}

int reader__peek(const struct reader *r, uint64_t from,
		 void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
		 uint64_t *to)
{
	return ringpos__peek(r->rp, from, fn, ctx, to);
}

void reader__free(struct reader *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	freelog__free(r->fl);
	ringpos__free(r->rp);
	free(r->held);
	free(r);
}

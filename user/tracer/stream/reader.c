// SPDX-License-Identifier: MIT
/*
 * reader.c - the ring buffer's records and the per-CPU logs' frees, in
 * the order they were made, each ring record looked at ahead of its
 * turn. See reader.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "freelog.h"
#include "heapsnoop/event.h"
#include "msg.h"
#include "reader.h"
#include "ring.h"

struct reader {
	struct ring *ring;
	struct freelog *fl;	/* NULL: every free is in the ring */
	struct reader_opts o;
	uint64_t limit;		/* ring records at or above it wait (the logs') */
	uint64_t cons;		/* the next ring record to hand over */
	uint64_t scan;		/* the next one to look at ahead (>= cons) */
	bool said_proto;
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
		err = r->o.fn(r->o.ctx, &r->free_ev, HS_EVENT_FREE_SIZE, e.stamp);
		if (err < 0)
			return err;
	}
	return 0;
}

static int proto(struct reader *r)
{
	if (!r->said_proto)
		elog("a ring buffer record's length does not fit the ring: its records cannot be "
		     "followed (please report this with heapsnoop -V and the kernel's version)");
	r->said_proto = true;
	return -EPROTO;
}

/* Look at the records after the last one looked at, as far as ahead takes them. */
static int look_ahead(struct reader *r)
{
	if (!r->o.ahead)
		return 0;
	for (;;) {
		const void *data;
		uint32_t len;
		uint64_t next;
		int k = ring__at(r->ring, r->scan, &data, &len, &next);

		if (k < 0)
			return proto(r);
		if (k == RING_NONE || k == RING_BUSY)
			return 0;
		if (k == RING_DATA && !r->o.ahead(r->o.ctx, data, len, r->scan + 1))
			return 0;
		r->scan = next;
	}
}

int reader__open(int ring_fd, size_t ring_size, int logs_fd, unsigned int ncpus,
		 const struct reader_opts *opts, struct reader **out)
{
	struct reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->o = *opts;
	r->limit = UINT64_MAX;
	r->free_ev.type = HS_EV_FREE;
	r->free_ev.func = HS_FN_FREE;
	err = ring__open(ring_fd, ring_size, &r->ring);
	if (!err && logs_fd >= 0)
		err = freelog__open(logs_fd, ncpus, &r->fl);
	if (err) {
		reader__free(r);
		return err;
	}
	*out = r;
	return 0;
}

int reader__drain(struct reader *r)
{
	int handed = 0, err = 0;

	if (r->o.flow)
		r->o.flow(r->o.ctx, ring__backlog(r->ring));
	if (r->fl)
		r->limit = freelog__collect(r->fl, ring__head(r->ring));
	err = look_ahead(r);
	while (!err && r->cons < r->limit) {
		const void *data;
		uint32_t len;
		uint64_t next, pos = r->cons;
		int k = ring__at(r->ring, pos, &data, &len, &next);

		if (k < 0) {
			err = proto(r);
			break;
		}
		if (k == RING_NONE || k == RING_BUSY)
			break;
		if (k == RING_DATA) {
			err = hand_frees(r, pos + 1);
			if (!err)
				err = r->o.fn(r->o.ctx, data, len, pos + 1);
			if (err < 0)
				break;
			handed++;
		}
		r->cons = next;
		if (r->scan < next)
			r->scan = next;
		/* Its bytes back to the producer: nothing below reads them again. */
		ring__release(r->ring, next);
		if (!(handed % READER_FLOW_EVERY) && r->o.flow)
			r->o.flow(r->o.ctx, ring__backlog(r->ring));
		err = look_ahead(r);
	}
	if (err < 0)
		return err;
	/* The frees that belong before the first ring record not handed over. */
	err = hand_frees(r, r->cons + 1);
	if (r->o.flow)
		r->o.flow(r->o.ctx, ring__backlog(r->ring));
	return err < 0 ? err : handed;
}

int reader__poll_fd(const struct reader *r)
{
	return ring__fd(r->ring);
}

uint64_t reader__head(const struct reader *r)
{
	return ring__head(r->ring);
}

uint64_t reader__backlog(const struct reader *r)
{
	return ring__backlog(r->ring);
}

uint64_t reader__logged_frees(const struct reader *r)
{
	return r->fl ? freelog__taken(r->fl) : 0;
}

int reader__peek(const struct reader *r, uint64_t from,
		 void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
		 uint64_t *to)
{
	return ring__peek(r->ring, from, fn, ctx, to);
}

void reader__free(struct reader *r)
{
	if (!r)
		return;
	freelog__free(r->fl);
	ring__free(r->ring);
	free(r);
}

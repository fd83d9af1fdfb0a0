/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the BPF ring buffer read in place: its records found by their
 * position in the producer's stream of bytes, looked at ahead of their
 * turn, and given back to the producer only once handled.
 *
 * libbpf's consumer (ring_buffer__consume) gives each record back as soon
 * as its callback returns, so nothing can be read ahead of the record
 * being handled without a copy. Here the consumer's position moves only
 * when the caller says so (ring__release()): the records between it and
 * the producer stay where the programs wrote them, and a pool of threads
 * can unwind them while the loop handles the ones before (reader.h).
 *
 * The layout is the kernel's (kernel/bpf/ringbuf.c, as libbpf maps it):
 * a consumer page the reader writes, a producer page and the data area
 * read-only, the data mapped twice in a row so that a record that wraps
 * reads on. Each record is an 8-byte header (its length, a busy bit while
 * it is written, a discard bit) and its data, padded to 8 bytes; the
 * header is written at the reservation, under the ring's lock, before the
 * producer's position moves past it. Positions are bytes since the ring's
 * start: a record reserved before another lies below it (docs/DESIGN.md,
 * "Order without a clock").
 */
#ifndef HEAPSNOOP_RING_H
#define HEAPSNOOP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ring;

/*
 * Map the ring buffer map @map_fd (a BPF_MAP_TYPE_RINGBUF of @size bytes,
 * a power of two). Returns 0 and *@out, or -errno (mmap's; -ENOMEM).
 */
int ring__open(int map_fd, size_t size, struct ring **out);

/* The map's descriptor: it polls readable when a program wakes the reader. */
int ring__fd(const struct ring *r);

/* The ring's data area's size, bytes. */
size_t ring__size(const struct ring *r);

/* The producer's position now: every record reserved so far lies below. */
uint64_t ring__head(const struct ring *r);

/* The consumer's position: the first record not given back lies there. */
uint64_t ring__tail(const struct ring *r);

/*
 * The bytes reserved by the producer and not yet given back (headers and
 * padding included): at most the ring's size.
 */
uint64_t ring__backlog(const struct ring *r);

/* What ring__at() found at a position. */
enum ring_rec {
	RING_NONE,	/* nothing there yet: the position is the producer's */
	RING_BUSY,	/* a record still being written: wait for it */
	RING_DATA,	/* a record committed */
	RING_SKIP,	/* a record discarded by its program: step over it */
};

/*
 * The record at position @pos, a record's start at or above the
 * consumer's: *@data and *@len (RING_DATA), and *@next, the position after
 * it (RING_DATA, RING_SKIP). -EPROTO: a length that does not fit the ring
 * (the stream cannot be followed).
 */
int ring__at(const struct ring *r, uint64_t pos, const void **data, uint32_t *len,
	     uint64_t *next);

/*
 * Give the bytes below @pos back to the producer (a record's start, at or
 * above the consumer's position, at or below the producer's): the records
 * there must not be read again.
 */
void ring__release(struct ring *r, uint64_t pos);

/*
 * The records committed from position @from (a record's start, or below
 * the consumer's: then from there) up to the producer's position now,
 * looked at without giving anything back: @fn(@ctx, data, len, pos) for
 * each (one still being written is stepped over). *@to gets the position
 * looked up to. Returns the records given, or -EPROTO.
 */
int ring__peek(const struct ring *r, uint64_t from,
	       void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
	       uint64_t *to);

void ring__free(struct ring *r);

#endif /* HEAPSNOOP_RING_H */

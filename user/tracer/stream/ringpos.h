/* SPDX-License-Identifier: MIT */
/*
 * ringpos.h - where each record lies in the BPF ring buffer's stream of
 * bytes, and where its producer is now. The stream's positions order the
 * records as a clock read per record would, without one: a record
 * reserved before another lies below it (docs/DESIGN.md, "Order without
 * a clock").
 *
 * Positions are the kernel's: the producer's starts at 0 when the map is
 * made and each record takes its 8-byte header and its length rounded up
 * to 8. libbpf hands its callback the record's data, at its header + 8 in
 * the data area (the data area's offset is the position modulo its size),
 * so a record's position is the last one's plus the distance between the
 * two, modulo the size: exact as long as every record is seen in order,
 * discarded ones (which libbpf does not hand over) included or not.
 */
#ifndef HEAPSNOOP_RINGPOS_H
#define HEAPSNOOP_RINGPOS_H

#include <stddef.h>
#include <stdint.h>

struct ringpos;

/*
 * Follow the ring buffer map @map_fd (a BPF_MAP_TYPE_RINGBUF of @size
 * bytes, a power of two, that no record was written to yet): its consumer
 * and producer pages mapped read-only. Returns 0 and *@out, or -errno
 * (mmap's; -ENOMEM).
 */
int ringpos__open(int map_fd, size_t size, struct ringpos **out);

/*
 * The position of the record whose data libbpf's callback got as
 * @sample (its header's position). Call it for every record handed
 * over, in order. Returns the position, or UINT64_MAX when @sample does
 * not lie in the ring's data area as libbpf maps it (then no order can be
 * trusted: the caller stops).
 */
uint64_t ringpos__of(struct ringpos *rp, const void *sample);

/* The producer's position now: every record reserved so far lies below. */
uint64_t ringpos__head(const struct ringpos *rp);

/*
 * The consumer's position now: the next record libbpf hands over lies
 * there (every record below it was handed over or discarded).
 */
uint64_t ringpos__tail(const struct ringpos *rp);

/*
 * The bytes reserved by the producer and not yet given back by the
 * consumer (records' headers and padding included), now: at most the
 * ring's size.
 */
uint64_t ringpos__backlog(const struct ringpos *rp);

/*
 * Look at the records the producer committed from position @from (a
 * record's start, or below the consumer's position: then from there) up
 * to its position now, without consuming them: @fn(@ctx, data, len, pos)
 * for each (one still being written or discarded is stepped over). Only
 * once a record was handed over (the data area's place is known from
 * it). *@to gets the position looked up to. Returns the records given.
 */
int ringpos__peek(const struct ringpos *rp, uint64_t from,
		  void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
		  uint64_t *to);

void ringpos__free(struct ringpos *rp);

#endif /* HEAPSNOOP_RINGPOS_H */

// SPDX-License-Identifier: MIT
/*
 * ringpos.c - records' positions in the BPF ring buffer's stream, and its
 * producer's. See ringpos.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ringpos.h"

/* The kernel's record header: its length and flags (BPF_RINGBUF_HDR_SZ). */
#define RINGBUF_HDR 8

struct ringpos {
	const volatile uint64_t *consumer;	/* the consumer page, read-only */
	const volatile uint64_t *producer;	/* the producer page, read-only */
	size_t page;
	uint64_t mask;		/* the data area's size - 1 */
	const char *base;	/* the data area, as libbpf maps it (first record's) */
	uint64_t last;		/* the last record's position */
	uint64_t last_off;	/* ... and its offset in the data area */
};

int ringpos__open(int map_fd, size_t size, struct ringpos **out)
{
	struct ringpos *rp = calloc(1, sizeof(*rp));
	void *p;

	if (!rp)
		return -ENOMEM;
	rp->page = (size_t)sysconf(_SC_PAGESIZE);
	/* The consumer page, then the producer page, then the data. */
	p = mmap(NULL, 2 * rp->page, PROT_READ, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		free(rp);
		return err;
	}
	rp->consumer = p;
	rp->producer = (const volatile uint64_t *)((const char *)p + rp->page);
	rp->mask = size - 1;
	*out = rp;
	return 0;
}

uint64_t ringpos__of(struct ringpos *rp, const void *sample)
{
	const char *hdr = (const char *)sample - RINGBUF_HDR;
	uint64_t off;

	if (!rp->base) {
		/* The first record: position 0, at the data area's start. */
		if ((uintptr_t)hdr & (rp->page - 1))
			return UINT64_MAX;
		rp->base = hdr;
		rp->last = 0;
		rp->last_off = 0;
		return 0;
	}
	if (hdr < rp->base)
		return UINT64_MAX;
	off = (uint64_t)(hdr - rp->base);
	if (off > rp->mask || (off & (RINGBUF_HDR - 1)))
		return UINT64_MAX;
	rp->last += (off - rp->last_off) & rp->mask;
	rp->last_off = off;
	return rp->last;
}

uint64_t ringpos__head(const struct ringpos *rp)
{
	return __atomic_load_n(rp->producer, __ATOMIC_ACQUIRE);
}

uint64_t ringpos__tail(const struct ringpos *rp)
{
	return __atomic_load_n(rp->consumer, __ATOMIC_ACQUIRE);
}

uint64_t ringpos__backlog(const struct ringpos *rp)
{
	uint64_t cons = ringpos__tail(rp);

	return ringpos__head(rp) - cons;
}

/* The kernel's header bits: being written, discarded (BPF_RINGBUF_*_BIT). */
#define RINGBUF_BUSY (1u << 31)
#define RINGBUF_DISCARD (1u << 30)

int ringpos__peek(const struct ringpos *rp, uint64_t from,
		  void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
		  uint64_t *to)
{
	uint64_t head = ringpos__head(rp), pos = from, tail = ringpos__tail(rp);
	int n = 0;

	if (pos < tail)
		pos = tail;
	/*
	 * The header is written at the reservation, before the producer's
	 * position moves past it (both under the ring's lock): every one
	 * below @head is there. libbpf maps the data area twice in a row,
	 * so a record that wraps reads on.
	 */
	while (rp->base && pos < head) {
		const uint32_t *hdr = (const uint32_t *)(rp->base + (pos & rp->mask));
		uint32_t w = __atomic_load_n(hdr, __ATOMIC_ACQUIRE), len = w & ~(RINGBUF_BUSY | RINGBUF_DISCARD);

		if (!(w & (RINGBUF_BUSY | RINGBUF_DISCARD))) {
			fn(ctx, (const char *)hdr + RINGBUF_HDR, len, pos);
			n++;
		}
		pos += (len + RINGBUF_HDR + 7) & ~7ULL;
	}
	*to = pos > head ? pos : head;
	return n;
}

void ringpos__free(struct ringpos *rp)
{
	if (!rp)
		return;
	munmap((void *)rp->consumer, 2 * rp->page);
	free(rp);
}

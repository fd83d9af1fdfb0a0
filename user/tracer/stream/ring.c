// SPDX-License-Identifier: MIT
/* ring.c - the BPF ring buffer read in place (see ring.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

/* The kernel's record header (BPF_RINGBUF_HDR_SZ) and its bits. */
#define HDR_SIZE	8
#define HDR_BUSY	(1u << 31)
#define HDR_DISCARD	(1u << 30)

struct ring {
	int fd;
	size_t page, size;
	uint64_t mask;
	volatile uint64_t *consumer;		/* the consumer page, ours to write */
	const volatile uint64_t *producer;	/* the producer page, then the data */
	const char *data;			/* the data area, mapped twice */
};

int ring__open(int map_fd, size_t size, struct ring **out)
{
	struct ring *r = calloc(1, sizeof(*r));
	void *p;
	int err;

	if (!r)
		return -ENOMEM;
	r->fd = map_fd;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->size = size;
	r->mask = size - 1;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	r->consumer = p;
	p = mmap(NULL, r->page + 2 * size, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED)
		goto fail;
	r->producer = p;
	r->data = (const char *)p + r->page;
	*out = r;
	return 0;
fail:
	err = -errno;
	ring__free(r);
	return err;
}

int ring__fd(const struct ring *r)
{
	return r->fd;
}

size_t ring__size(const struct ring *r)
{
	return r->size;
}

uint64_t ring__head(const struct ring *r)
{
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
}

uint64_t ring__tail(const struct ring *r)
{
	return __atomic_load_n(r->consumer, __ATOMIC_RELAXED);
}

uint64_t ring__backlog(const struct ring *r)
{
	return ring__head(r) - ring__tail(r);
}

int ring__at(const struct ring *r, uint64_t pos, const void **data, uint32_t *len,
	     uint64_t *next)
{
	const uint32_t *hdr;
	uint32_t w, n;

	if (pos >= ring__head(r))
		return RING_NONE;
	hdr = (const uint32_t *)(r->data + (pos & r->mask));
	/* Pairs with the commit's release of the header (bpf_ringbuf_commit). */
	w = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
	if (w & HDR_BUSY)
		return RING_BUSY;
	n = w & ~HDR_DISCARD;
	if (n > r->size - HDR_SIZE)
		return -EPROTO;
	*next = pos + ((n + HDR_SIZE + 7) & ~7ull);
	if (w & HDR_DISCARD)
		return RING_SKIP;
	*data = (const char *)hdr + HDR_SIZE;
	*len = n;
	return RING_DATA;
}

void ring__release(struct ring *r, uint64_t pos)
{
	/* The records below are read: the producer may write over them. */
	__atomic_store_n(r->consumer, pos, __ATOMIC_RELEASE);
}

int ring__peek(const struct ring *r, uint64_t from,
	       void (*fn)(void *ctx, const void *data, size_t len, uint64_t pos), void *ctx,
	       uint64_t *to)
{
	uint64_t head = ring__head(r), pos = from, tail = ring__tail(r);
	int n = 0;

	if (pos < tail)
		pos = tail;
	/* Every header below @head is there, busy or not (ring.h). */
	while (pos < head) {
		const uint32_t *hdr = (const uint32_t *)(r->data + (pos & r->mask));
		uint32_t w = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t len = w & ~(HDR_BUSY | HDR_DISCARD);

		if (len > r->size - HDR_SIZE)
			return -EPROTO;
		if (!(w & (HDR_BUSY | HDR_DISCARD))) {
			fn(ctx, (const char *)hdr + HDR_SIZE, len, pos);
			n++;
		}
		pos += (len + HDR_SIZE + 7) & ~7ull;
	}
	*to = pos > head ? pos : head;
	return n;
}

void ring__free(struct ring *r)
{
	if (!r)
		return;
	if (r->consumer)
		munmap((void *)r->consumer, r->page);
	if (r->producer)
		munmap((void *)r->producer, r->page + 2 * r->size);
	free(r);
}

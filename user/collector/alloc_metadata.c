// SPDX-License-Identifier: MIT
/*
 * alloc_metadata.c - the alloc-metadata layout, the live list and its dump
 * (include/heapsnoop/alloc_metadata.h). After libwebsockets'
 * _lws_alloc_metadata_adjust/trim/dump: the record is compressed once, at
 * the allocation, and kept behind the block, so a dump only base64s it.
 * The record lines are records.c's, the blob the codec's; a deep
 * stack's frames past the blob's are stacktail.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heapsnoop/alloc_metadata.h"
#include "records.h"
#include "sampling.h"
#include "stacktail.h"

struct hs_am {
	pthread_mutex_t lock;
	struct hs_am_node head;		/* circular list; head.next: newest */
	uint64_t live, bytes;		/* count and bytes (estimated if sampled) */
	uint64_t sample_bytes;		/* a sample of this mean, 0: whole */
	struct hs_am_ops ops;
};

struct hs_am *hs_am__new(const struct hs_am_ops *ops)
{
	struct hs_am *am = calloc(1, sizeof(*am));

	if (!am)
		return NULL;
	pthread_mutex_init(&am->lock, NULL);
	am->head.next = am->head.prev = &am->head;
	if (ops)
		am->ops = *ops;
	return am;
}

void hs_am__free(struct hs_am *am)
{
	if (!am)
		return;
	pthread_mutex_destroy(&am->lock);
	free(am);
}

_Static_assert(HS_AM_CUT_DEPTH == REC_CUT_DEPTH && HS_AM_CUT_UNREADABLE == REC_CUT_UNREADABLE,
	       "a node's cut bits are the live record's");

size_t hs_am_site__prepare_bits(struct hs_am_site *site, uint64_t size, size_t align,
				const struct hs_stack_bits *sb, int *err)
{
	int n = hs_blob_encode_stack(sb, size, site->blob, sizeof(site->blob));
	size_t meta;

	if (err)
		*err = n < 0 ? n : 0;
	if (n < 0)
		return 0;
	if (align < HS_AM_MIN_ALIGN)
		align = HS_AM_MIN_ALIGN;
	meta = (size_t)n + sizeof(uint16_t) + sizeof(struct hs_am_node);
	site->len = (uint16_t)n;
	site->size = size;
	site->cut = 0;
	site->tail = 0;
	site->head = (meta + align - 1) & ~(align - 1);
	if (size > SIZE_MAX - site->head) {
		if (err)
			*err = -HS_ERANGE;
		return 0;
	}
	return site->head + (size_t)size;
}

size_t hs_am_site__prepare(struct hs_am_site *site, uint64_t size, size_t align,
			   const uint64_t *frames, uint32_t depth, int *err)
{
	struct hs_stack_bits sb;
	int n = hs_stack_bits_encode(frames, depth, &sb);

	if (n < 0) {
		if (err)
			*err = n;
		return 0;
	}
	return hs_am_site__prepare_bits(site, size, align, &sb, err);
}

void *hs_am__place(struct hs_am *am, const struct hs_am_site *site, void *block)
{
	char *user = (char *)block + site->head;
	struct hs_am_node *n = hs_am_node(user);
	uint16_t len = site->len;

	memcpy((char *)n - sizeof(len), &len, sizeof(len));
	memcpy((char *)n - sizeof(len) - len, site->blob, len);
	n->size = site->size;
	n->cut = site->cut & (HS_AM_CUT_DEPTH | HS_AM_CUT_UNREADABLE);
	n->tail = site->tail;
	n->head = (uint32_t)site->head;
	n->magic = hs_am_node_magic(n);

	pthread_mutex_lock(&am->lock);
	n->prev = &am->head;
	n->next = am->head.next;
	am->head.next->prev = n;
	am->head.next = n;
	am->live++;
	am->bytes += am->sample_bytes ? sample_estimate(n->size, am->sample_bytes) : n->size;
	if (am->ops.alloc)
		am->ops.alloc(am->ops.arg, user, n->size, site->blob, len);
	pthread_mutex_unlock(&am->lock);
	return user;
}

void *hs_am__remove(struct hs_am *am, void *user)
{
	struct hs_am_node *n = hs_am_node(user);

	pthread_mutex_lock(&am->lock);
	if (am->ops.free)
		am->ops.free(am->ops.arg, user, n->size);
	n->prev->next = n->next;
	n->next->prev = n->prev;
	am->live--;
	am->bytes -= am->sample_bytes ? sample_estimate(n->size, am->sample_bytes) : n->size;
	pthread_mutex_unlock(&am->lock);
	/* A second free of the same pointer is not taken for ours. */
	n->magic = 0;
	return (char *)user - n->head;
}

bool hs_am_owns(const void *user)
{
	return hs_am_owns_inline(user);
}

const uint8_t *hs_am_blob(const void *user, size_t *len)
{
	const char *n = (const char *)hs_am_node(user);
	uint16_t l;

	memcpy(&l, n - sizeof(l), sizeof(l));
	*len = l;
	return (const uint8_t *)n - sizeof(l) - l;
}

void hs_am__lock(struct hs_am *am)
{
	pthread_mutex_lock(&am->lock);
}

void hs_am__unlock(struct hs_am *am)
{
	pthread_mutex_unlock(&am->lock);
}

void hs_am__set_sample_bytes(struct hs_am *am, uint64_t mean)
{
	pthread_mutex_lock(&am->lock);
	am->sample_bytes = mean;
	pthread_mutex_unlock(&am->lock);
}

void hs_am__totals(struct hs_am *am, uint64_t *live, uint64_t *bytes)
{
	pthread_mutex_lock(&am->lock);
	*live = am->live;
	*bytes = am->bytes;
	pthread_mutex_unlock(&am->lock);
}

/* One `live` line: the blob behind @user as a `~m#` token. */
static int write_live(FILE *out, int pid, const void *user)
{
	char tok[HS_TOKEN_BUF] = "~m#";
	struct record r = { .type = REC_LIVE, .pid = pid, .ptr = (uintptr_t)user,
			    .cut = hs_am_node(user)->cut };
	size_t len;
	const uint8_t *blob = hs_am_blob(user, &len);
	int n = hs_base64_encode(blob, len, tok + 3, sizeof(tok) - 3);

	if (n < 0) {
		r.size = hs_am_node(user)->size;
		r.error = hs_strerror(n);
		return records__write(out, &r);
	}
	r.token = tok;
	r.token_len = (size_t)n + 3;
	/* A deep stack: its continuation, kept once for all its blocks. */
	r.tail = stacktail__tokens(hs_am_node(user)->tail, &r.depth);
	r.tail_len = r.tail ? strlen(r.tail) : 0;
	if (!r.tail)
		r.depth = 0;
	return records__write(out, &r);
}

int hs_am__dump(struct hs_am *am, FILE *out, int pid, const char *reason,
		hs_am_maps_fn maps, void *arg)
{
	struct record r = { .type = REC_DUMP };
	struct timespec now;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	r.time_s = now.tv_sec;
	r.time_ms = (uint32_t)(now.tv_nsec / 1000000);
	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	pthread_mutex_lock(&am->lock);
	r.live = am->live;
	r.bytes = am->bytes;
	r.sample_bytes = am->sample_bytes;
	/* stacks=0: the list keeps blobs, not unique stacks (docs/COLLECTOR.md). */
	err |= records__write(out, &r);
	if (maps)
		err |= maps(out, pid, arg);
	for (struct hs_am_node *n = am->head.next; n != &am->head; n = n->next)
		err |= write_live(out, pid, n + 1);
	r = (struct record){ .type = REC_END_DUMP, .live = am->live };
	err |= records__write(out, &r);
	pthread_mutex_unlock(&am->lock);
	return err || fflush(out) ? -EIO : 0;
}

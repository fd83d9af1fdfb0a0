// SPDX-License-Identifier: MIT
/*
 * alloc_metadata.c - the alloc-metadata layout and the live list
 * (include/heapsnoop/alloc_metadata.h): the portable core, on any C11
 * target with the port's lock (port/amport.h), 32- or 64-bit. After
 * libwebsockets' _lws_alloc_metadata_adjust/trim: the record is
 * compressed once, at the allocation, and kept behind the block, so a
 * dump only base64s it. The dumps are amdump.c's (stdio, Linux) and
 * amlines.c's (a write callback, a firmware's); the blob is the codec's.
 */
#include <string.h>

#include "amlist.h"

struct hs_am *hs_am__new(const struct hs_am_ops *ops)
{
	struct hs_am *am = am_port_zalloc(sizeof(*am));

	if (!am)
		return NULL;
	am_lock_init(&am->lock);
	am->head.next = am->head.prev = &am->head;
	if (ops)
		am->ops = *ops;
	return am;
}

void hs_am__free(struct hs_am *am)
{
	if (!am)
		return;
	am_lock_destroy(&am->lock);
	am_port_release(am);
}

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

	am_lock_take(&am->lock);
	n->prev = &am->head;
	n->next = am->head.next;
	am->head.next->prev = n;
	am->head.next = n;
	am->live++;
	am->bytes += am->sample_bytes ? am_port_estimate(n->size, am->sample_bytes) : n->size;
	if (am->ops.alloc)
		am->ops.alloc(am->ops.arg, user, n->size, site->blob, len);
	am_lock_give(&am->lock);
	return user;
}

void *hs_am__remove(struct hs_am *am, void *user)
{
	struct hs_am_node *n = hs_am_node(user);

	am_lock_take(&am->lock);
	if (am->ops.free)
		am->ops.free(am->ops.arg, user, n->size);
	n->prev->next = n->next;
	n->next->prev = n->prev;
	am->live--;
	am->bytes -= am->sample_bytes ? am_port_estimate(n->size, am->sample_bytes) : n->size;
	am_lock_give(&am->lock);
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
	am_lock_take(&am->lock);
}

void hs_am__unlock(struct hs_am *am)
{
	am_lock_give(&am->lock);
}

void hs_am__set_sample_bytes(struct hs_am *am, uint64_t mean)
{
	if (!AM_PORT_SAMPLING)
		return;
	am_lock_take(&am->lock);
	am->sample_bytes = mean;
	am_lock_give(&am->lock);
}

void hs_am__totals(struct hs_am *am, uint64_t *live, uint64_t *bytes)
{
	am_lock_take(&am->lock);
	*live = am->live;
	*bytes = am->bytes;
	am_lock_give(&am->lock);
}

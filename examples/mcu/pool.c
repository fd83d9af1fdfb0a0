// SPDX-License-Identifier: MIT
/*
 * pool.c - the firmware's allocator: a pool of fixed blocks whose live
 * ones carry lws-style metadata (libwebsockets' lws_alloc_metadata: the
 * allocation's size and return-address backtrace, compressed, in front
 * of the user's bytes), kept on libhsam's live list and dumped as
 * heapsnoop's `~m#` lines to the UART (include/heapsnoop/alloc_metadata.h).
 * examples/am_pool.c is the same on Linux.
 */
#include <string.h>

#include "heapsnoop/alloc_metadata.h"
#include "fw.h"

static _Alignas(16) uint8_t blocks[POOL_BLOCKS][POOL_BLOCK];
static void *free_list;	/* each free block holds the next */
static struct hs_am *live;

int pool_init(void)
{
	live = hs_am__new(NULL);
	if (!live)
		return -1;
	for (int i = POOL_BLOCKS - 1; i >= 0; i--) {
		memcpy(blocks[i], &free_list, sizeof(free_list));
		free_list = blocks[i];
	}
	return 0;
}

/* The record first (stack and size), then a block if it all fits. */
__attribute__((noinline)) void *pool_alloc(size_t size)
{
	uint64_t frames[HS_MAX_DEPTH];
	struct hs_am_site site;
	uint32_t cut;
	/* skip 1, this function: the first frame is the call site in its caller. */
	uint32_t n = fw_backtrace(frames, HS_MAX_DEPTH, 1, &cut);
	size_t total = hs_am_site__prepare(&site, size, 16, frames, n, NULL);
	void *block;

	if (!total || total > POOL_BLOCK || !free_list)
		return NULL;
	site.cut = cut;
	block = free_list;
	memcpy(&free_list, block, sizeof(free_list));
	return hs_am__place(live, &site, block);
}

void pool_free(void *p)
{
	void *block;

	if (!p)
		return;
	block = hs_am__remove(live, p);
	memcpy(block, &free_list, sizeof(free_list));
	free_list = block;
}

static int uart_line(void *arg, const char *buf, size_t len)
{
	(void)arg;
	uart_write(buf, len);
	return 0;
}

/* pid 1: the firmware is one process to heapdecode. */
int pool_dump(const char *reason)
{
	return hs_am__dump_lines(live, uart_line, NULL, 1, reason, 0);
}

// SPDX-License-Identifier: MIT
/*
 * am_pool.c - a tiny allocator of its own, instrumented with heapsnoop's
 * alloc-metadata library the way LWS_WITH_ALLOC_METADATA_LWS instruments
 * libwebsockets' allocator: each block carries its record behind it, the
 * live list is dumped as heapsnoop's records, and heapdecode reads them.
 * docs/COLLECTOR.md walks through the three calls.
 *
 *   am_pool   (dumps its live blocks to standard output at the end)
 *   am_pool | heapdecode --report
 *
 * The pool: one static arena, power-of-two size classes from 32 bytes to
 * 4 KiB, a free list per class. Stacks come from glibc's backtrace().
 */
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "heapsnoop/alloc_metadata.h"

#define CLASSES 8			/* 32 << 0 .. 32 << 7 = 4096 bytes */
static _Alignas(64) char arena[1 << 20];
static size_t arena_used;
static void *free_list[CLASSES];	/* each free block holds the next */
static struct hs_am *live;

static int class_of(size_t n)
{
	int c = 0;

	while ((32u << c) < n)
		c++;
	return c < CLASSES ? c : -1;
}

static void *pool_get(size_t n)
{
	int c = class_of(n);
	void *p;

	if (c < 0)
		return NULL;
	if ((p = free_list[c])) {
		memcpy(&free_list[c], p, sizeof(void *));
		return p;
	}
	if (arena_used + (32u << c) > sizeof(arena))
		return NULL;
	p = arena + arena_used;
	arena_used += 32u << c;	/* every class a multiple of 32: 16-aligned */
	return p;
}

static void pool_put(void *p, size_t n)
{
	int c = class_of(n);

	memcpy(p, &free_list[c], sizeof(void *));
	free_list[c] = p;
}

/* The instrumented allocator: the record first, then the block. */
__attribute__((noinline)) void *pool_alloc(size_t size)
{
	void *ip[HS_MAX_DEPTH + 1];
	uint64_t frames[HS_MAX_DEPTH];
	struct hs_am_site site;
	int n = backtrace(ip, HS_MAX_DEPTH + 1);	/* ip[0]: here */
	size_t total;
	void *block;

	for (int i = 1; i < n; i++)
		frames[i - 1] = (uintptr_t)ip[i];
	total = hs_am_site__prepare(&site, size, 16, frames, n > 0 ? n - 1 : 0, NULL);
	block = total ? pool_get(total) : NULL;
	return block ? hs_am__place(live, &site, block) : NULL;
}

void pool_free(void *p)
{
	size_t total;

	if (!p)
		return;
	total = hs_am_node(p)->head + hs_am_node(p)->size;
	pool_put(hs_am__remove(live, p), total);
}

/* --- a program using it ----------------------------------------------------- */

__attribute__((noinline)) static char *make_name(int i)
{
	char *s = pool_alloc(40);

	if (s)
		snprintf(s, 40, "session-%d", i);
	return s;
}

__attribute__((noinline)) static void *make_buffer(void)
{
	return pool_alloc(1000);
}

int main(void)
{
	void *keep[8];

	backtrace(keep, 1);	/* libgcc loaded before the first record */
	live = hs_am__new(NULL);
	if (!live)
		return 1;
	for (int i = 0; i < 8; i++) {
		char *name = make_name(i);

		keep[i] = make_buffer();
		if (i % 2)
			pool_free(name);	/* the even ones leak */
	}
	for (int i = 0; i < 8; i += 2)
		pool_free(keep[i]);
	/* Left live: 4 names of 40 bytes, 4 buffers of 1000 bytes. */
	return hs_am__dump(live, stdout, (int)getpid(), "exit", hs_am_maps_self, NULL) ? 1 : 0;
}

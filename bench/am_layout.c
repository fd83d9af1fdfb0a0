// SPDX-License-Identifier: MIT
/*
 * am_layout.c - where the collector keeps an allocation's record, by
 * measurement (docs/COLLECTOR.md, "Behind the block or in a table"):
 *   behind  the alloc-metadata layout: one over-allocated block, the blob
 *           behind the user's bytes, a list node (alloc_metadata.c)
 *   table   the user's block as asked, plus a record (blob and size) in a
 *           block of its own, found by address in a hash table (htab.c)
 * Both under one mutex, the same blobs (16 distinct 8-frame stacks), the
 * same mix as bench/workload.c (a pool of 4096 slots, 16..527 bytes).
 * Rounds interleave the two; the best round of each is printed, with the
 * metadata bytes per live block (malloc_usable_size of what each keeps).
 *
 *   am_layout [OPS]
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heapsnoop/alloc_metadata.h"
#include "htab.h"

#define SLOTS 4096

struct table_rec {
	uint64_t size;
	uint16_t len;
	uint8_t blob[];
};

static struct hs_am *am;
static struct htab *tab;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *slot[SLOTS];
static uint64_t frames[16][8];

static void *alloc_behind(size_t size, unsigned int stack)
{
	struct hs_am_site site;
	size_t total = hs_am_site__prepare(&site, size, 16, frames[stack], 8, NULL);

	return hs_am__place(am, &site, malloc(total));
}

static void free_behind(void *p)
{
	free(hs_am__remove(am, p));
}

static void *alloc_table(size_t size, unsigned int stack)
{
	struct hs_record rec = { .size = size, .depth = 8 };
	uint8_t blob[HS_BLOB_BUF];
	int n;
	struct table_rec *r;
	void *p = malloc(size);

	memcpy(rec.frames, frames[stack], sizeof(frames[stack]));
	n = hs_blob_encode(&rec, blob, sizeof(blob));
	r = malloc(sizeof(*r) + (size_t)n);
	r->size = size;
	r->len = (uint16_t)n;
	memcpy(r->blob, blob, (size_t)n);
	pthread_mutex_lock(&lock);
	htab__add(tab, htab_hash2((uintptr_t)p, 0), (uintptr_t)p, r);
	pthread_mutex_unlock(&lock);
	return p;
}

static void free_table(void *p)
{
	struct table_rec *r;

	pthread_mutex_lock(&lock);
	r = htab__delete(tab, htab_hash2((uintptr_t)p, 0), (uintptr_t)p);
	pthread_mutex_unlock(&lock);
	free(r);
	free(p);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* One run of @ops operations: ns per operation. */
static double run(long ops, int table)
{
	double t0 = now_ns();

	for (long i = 0; i < ops; i++) {
		unsigned int s = (unsigned int)(i * 2654435761u) % SLOTS;

		if (!slot[s]) {
			slot[s] = table ? alloc_table(16 + i % 512, i % 16) :
					  alloc_behind(16 + i % 512, i % 16);
		} else {
			table ? free_table(slot[s]) : free_behind(slot[s]);
			slot[s] = NULL;
		}
	}
	return (now_ns() - t0) / ops;
}

/* Metadata bytes per live block, then every block freed. */
static double overhead_and_clear(int table)
{
	size_t meta = 0, n = 0;

	for (int s = 0; s < SLOTS; s++) {
		void *p = slot[s];

		if (!p)
			continue;
		n++;
		if (table) {
			meta += malloc_usable_size(htab__find(tab, htab_hash2((uintptr_t)p, 0),
							      (uintptr_t)p));
			free_table(p);
		} else {
			meta += hs_am_node(p)->head;
			free_behind(p);
		}
		slot[s] = NULL;
	}
	if (table)
		meta += htab__memory(tab);	/* the table's slots, shared out */
	return n ? (double)meta / n : 0;
}

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 2000000;
	double best[2] = { 1e30, 1e30 }, worst[2] = { 0, 0 }, meta[2];

	for (int k = 0; k < 16; k++)
		for (int f = 0; f < 8; f++)
			frames[k][f] = 0x555555554000ull + 0x1000 * f + 0x40 * k + 0x7;
	am = hs_am__new(NULL);
	tab = htab__new(SLOTS, NULL, NULL);
	for (int round = 0; round < 5; round++) {
		for (int table = 0; table < 2; table++) {
			double ns = run(ops / 5, table);

			best[table] = ns < best[table] ? ns : best[table];
			worst[table] = ns > worst[table] ? ns : worst[table];
			meta[table] = overhead_and_clear(table);
		}
	}
	printf("am_layout: %ld operations per mode (alloc or free), best of 5 interleaved rounds\n", ops / 5);
	printf("  %-8s %8.1f ns/op (worst round %.1f)  %6.1f metadata bytes per live block\n",
	       "behind", best[0], worst[0], meta[0]);
	printf("  %-8s %8.1f ns/op (worst round %.1f)  %6.1f metadata bytes per live block\n",
	       "table", best[1], worst[1], meta[1]);
	return 0;
}

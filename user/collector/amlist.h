/* SPDX-License-Identifier: MIT */
/*
 * amlist.h - the alloc-metadata list itself (struct hs_am), shared by the
 * files that write it out: alloc_metadata.c (the portable core: layout,
 * list, counts), amdump.c (the Linux dump through stdio, with `map`
 * records), amlines.c (the same lines through a write callback, no stdio:
 * a firmware's). Its lock is the port's (port/amport.h).
 */
#ifndef HEAPSNOOP_AMLIST_H
#define HEAPSNOOP_AMLIST_H

#include <stdint.h>

#include "heapsnoop/alloc_metadata.h"
#include "port/amport.h"

struct hs_am {
	am_lock_t lock;
	struct hs_am_node head;		/* circular list; head.next: newest */
	uint64_t live, bytes;		/* count and bytes (estimated if sampled) */
	uint64_t sample_bytes;		/* a sample of this mean, 0: whole */
	struct hs_am_ops ops;
};

#endif /* HEAPSNOOP_AMLIST_H */

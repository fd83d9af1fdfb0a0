/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * frees.h - plain frees written to their CPU's log beside the ring
 * buffer, not into it: a claim and three stores instead of a record, for a
 * third of a busy program's allocator calls (docs/DESIGN.md, "Frees beside
 * the ring"). The loader takes the entries (user/tracer/stream/freelog.c) and
 * hands each over among the ring's records by its stamp. The log's layout
 * is include/heapsnoop/event.h's struct hs_free_log.
 *
 * Maps: free_logs.
 */
#ifndef HEAPSNOOP_BPF_FREES_H
#define HEAPSNOOP_BPF_FREES_H

#include "record.h"

/*
 * One struct hs_free_log per possible CPU (the loader sets max_entries),
 * mapped by the loader (user/tracer/stream/freelog.c), which takes the entries.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct hs_free_log);
} free_logs SEC(".maps");

/*
 * free(@addr) by thread @id into this CPU's log: an entry claimed with a
 * compare-and-exchange of the head (a program that preempted this one on
 * this CPU may hold the next one), filled, then its stamp, the ring
 * buffer's producer position + 1, read after the claim and stored last
 * (the loader takes an entry once its stamp is set: bpf/arch.bpf.h's
 * HS_STORE_RELEASE). Returns false when the log is full or the claim was
 * lost: the caller sends a ring buffer record instead.
 */
static __always_inline bool log_free(__u64 id, __u64 addr)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct hs_free_entry *e;
	struct hs_free_log *l;
	__u64 h;

	l = bpf_map_lookup_elem(&free_logs, &cpu);
	if (!l)
		return false;
	h = READ_ONCE(l->head);
	if (h - READ_ONCE(l->tail) >= HS_FREE_LOG_ENTRIES ||
	    __sync_val_compare_and_swap(&l->head, h, h + 1) != h) {
		count(HS_CNT_FREE_LOG_FULL);
		return false;
	}
	e = &l->e[h & (HS_FREE_LOG_ENTRIES - 1)];
	e->addr = addr;
	e->id = id;
	HS_STORE_RELEASE(&e->stamp, ring_pos());
	return true;
}

#endif /* HEAPSNOOP_BPF_FREES_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tail.h - stack tails (include/heapsnoop/event.h's struct hs_tail;
 * docs/DESIGN.md, "Deep stacks copied once"): before a deep stack is
 * copied whole, the tail the loader gave the thread is checked, word by
 * word, still in place above the stack pointer; then only the stack below
 * its start is copied, and the record names it. The loader writes the
 * tails (user/tracer/unwind/tails.c), the programs only read them.
 *
 * Maps: tails.
 */
#ifndef HEAPSNOOP_BPF_TAIL_H
#define HEAPSNOOP_BPF_TAIL_H

#include "record.h"

/* One tail per slot, by thread id (BPF_F_MMAPABLE: the loader writes it in place). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, HS_TAIL_SLOTS);
	__type(key, __u32);
	__type(value, struct hs_tail);
} tails SEC(".maps");

/*
 * The tail of thread @id's stack (bpf_get_current_pid_tgid()'s), if the
 * loader gave it one and it is still in place above @sp: its id, and its
 * start in *@start; 0 when there is none or a word differs (the stack
 * changed there: copied whole). Read as a sequence lock: a tail the
 * loader rewrote meanwhile is taken for none.
 */
static __always_inline __u64 tail_find(__u64 id, __u64 sp, __u64 *start)
{
	__u32 k = (__u32)id & (HS_TAIL_SLOTS - 1), n;
	struct hs_tail *t = bpf_map_lookup_elem(&tails, &k);
	__u64 tid, at, seq;

	if (!t)
		return 0;
	seq = HS_LOAD_ACQUIRE(&t->seq);
	if (seq & 1 || READ_ONCE(t->tid) != (__u32)id || READ_ONCE(t->pid) != id >> 32)
		return 0;
	n = READ_ONCE(t->nwords);
	at = READ_ONCE(t->start);
	tid = READ_ONCE(t->id);
	/* The stack must go on above @sp to the tail (not returned past it). */
	if (!n || at <= sp || at - sp + HS_TAIL_OVERLAP > stack_copy)
		return 0;
	for (int i = 0; i < HS_TAIL_WORDS; i++) {
		__u64 v;

		if (i >= n)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), (void *)(at + READ_ONCE(t->w[i].off))) ||
		    v != READ_ONCE(t->w[i].val)) {
			count(HS_CNT_TAIL_MISS);
			return 0;
		}
	}
	if (HS_LOAD_ACQUIRE(&t->seq) != seq)
		return 0;
	*start = at;
	return tid;
}

#endif /* HEAPSNOOP_BPF_TAIL_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * record.h - the ring buffer and what goes into it: the fields every record
 * has (include/heapsnoop/event.h), a free's record, when the consumer is
 * woken, the producer's position that orders the records without a clock
 * (docs/DESIGN.md, "Order without a clock"), and the counters of what
 * could not be done (enum hs_counter), among them every record the ring
 * buffer refuses, which the loader reports.
 *
 * Maps: events (the ring buffer), counters.
 */
#ifndef HEAPSNOOP_BPF_RECORD_H
#define HEAPSNOOP_BPF_RECORD_H

#include "config.h"

/* Events to the loader; its size is set by the loader (--ringbuf-size). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* enum hs_counter -> count, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HS_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * An atomic add, since a preempted program's increment could otherwise
 * be lost to another's on the same CPU.
 */
static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		__sync_fetch_and_add(c, 1);
}

/* The same by @n (a count of bytes). */
static __always_inline void count_add(__u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		__sync_fetch_and_add(c, n);
}

/*
 * The ring buffer's producer position + 1 (never 0): every record reserved
 * before now lies below it, every one reserved after at or above. This
 * orders what a clock read would (HS_EV_FREE), for much less: without the
 * clock reads alloc_exit ran 55-90 ns faster (docs/PERFORMANCE.md).
 */
static __always_inline __u64 ring_pos(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_PROD_POS) + 1;
}

/*
 * Waking the consumer costs more than the rest of a probe, so it is woken
 * only once a backlog of @backlog bytes builds; otherwise it finds the
 * events on its next periodic poll (user/tracer/session.c).
 */
static __always_inline __u64 wakeup_flags_at(__u64 backlog)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= backlog ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* The flags of every record's submit but a free's: wakeup_bytes. */
static __always_inline __u64 wakeup_flags(void)
{
	return wakeup_flags_at(wakeup_bytes);
}

/*
 * The fields every record has (HS_EVENT_FREE_SIZE bytes), for thread @id
 * (bpf_get_current_pid_tgid()'s).
 */
static __always_inline void fill_common(struct hs_event *ev, __u64 id, __u32 type, __u16 func,
					__u64 addr, __u64 entry_pos)
{
	ev->type = type;
	ev->pid = id >> 32;
	ev->tid = (__u32)id;
	ev->func = func;
	ev->nr_frames = 0;
	ev->addr = addr;
	ev->entry_pos = entry_pos;
}

/* The whole header, for thread @id; the caller sets the rest. */
static __always_inline void fill_header(struct hs_event *ev, __u64 id, __u32 type, __u16 func,
					__u64 addr, __u64 entry_pos)
{
	fill_common(ev, id, type, func, addr, entry_pos);
	ev->flags = 0;
	ev->interp_frames = 0;
}

/*
 * Block @addr was released by thread @id. The record is the header's
 * first part only (HS_EVENT_FREE_SIZE), built in place. A plain free
 * (entry_pos 0) is unconditional; one from realloc carries the realloc's
 * ring_pos() at entry.
 */
static __always_inline void emit_free(__u64 id, __u64 addr, __u64 entry_pos)
{
	struct hs_event *ev;

	ev = bpf_ringbuf_reserve(&events, HS_EVENT_FREE_SIZE, 0);
	if (!ev) {
		count(HS_CNT_RB_LOST_FREE);
		return;
	}
	fill_common(ev, id, HS_EV_FREE, HS_FN_FREE, addr, entry_pos);
	bpf_ringbuf_submit(ev, wakeup_flags_at(free_wakeup_bytes));
}

#endif /* HEAPSNOOP_BPF_RECORD_H */

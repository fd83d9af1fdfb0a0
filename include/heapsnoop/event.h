/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * event.h - what crosses the ring buffer from bpf/heapsnoop.bpf.c to the
 * loader (user/trace.c), and the counters the BPF side keeps. Shared by
 * both sides, so it uses only fixed-width types of both worlds.
 */
#ifndef HEAPSNOOP_EVENT_H
#define HEAPSNOOP_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Frames the BPF side walks at most: 31 kept + room for --snip-pre/post. */
#define HS_BPF_MAX_FRAMES 64
/* Bytes of user stack copied in one read at each allocation's return. */
#define HS_STACK_COPY 512
/* Above every user address (x86-64, 5-level paging): a frame there is junk. */
#define HS_USER_ADDR_END (1ULL << 56)
/* An in-flight call older than this is taken as a missed return (ns). */
#define HS_STALE_NS 2000000000ULL

/* The probed allocator functions (index into the loader's probe table). */
enum hs_func {
	HS_FN_MALLOC,
	HS_FN_CALLOC,
	HS_FN_REALLOC,
	HS_FN_REALLOCARRAY,
	HS_FN_POSIX_MEMALIGN,
	HS_FN_ALIGNED_ALLOC,
	HS_FN_MEMALIGN,
	HS_FN_VALLOC,
	HS_FN_PVALLOC,
	HS_FN_FREE,
	HS_FN__MAX,
};

enum hs_event_type {
	/*
	 * A successful allocation of @size bytes at @addr with its stack.
	 * A realloc-family call also sets @old_addr and @entry_ts: the block
	 * at @old_addr is released if it moved (see HS_EV_FREE for the rule).
	 */
	HS_EV_ALLOC = 1,
	/*
	 * @addr was released. @entry_ts == 0: by free(), before the allocator
	 * could hand the block out again. @entry_ts != 0: by a realloc that
	 * began at @entry_ts, so the block is released only if it was
	 * allocated before then (another thread may have been given the same
	 * address in between).
	 */
	HS_EV_FREE = 2,
	/*
	 * System-wide mode: process @pid ended (its last thread exited,
	 * @tid is that thread). Its live allocations are gone with it.
	 */
	HS_EV_EXIT = 3,
	/* System-wide mode: process @pid exec'd; the old image's heap is gone. */
	HS_EV_EXEC = 4,
};

/* hs_event.flags */
#define HS_EVF_TRUNCATED	(1u << 0) /* the frame chain went on past max */
#define HS_EVF_STACK_FAULT	(1u << 1) /* a frame could not be read */

struct hs_event {
	__u32 type;		/* enum hs_event_type */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u16 func;		/* enum hs_func that made the call */
	__u16 nr_frames;	/* valid entries in frames[] */
	__u64 ts;		/* CLOCK_MONOTONIC ns at the return; 0 for a free */
	__u64 addr;
	__u64 old_addr;		/* realloc family: the block passed in */
	__u64 size;		/* bytes requested */
	__u64 entry_ts;		/* realloc family: CLOCK_MONOTONIC ns at entry */
	__u32 flags;		/* HS_EVF_* */
	__u32 pad;
	/* Return addresses, innermost (the allocator's caller) first. */
	__u64 frames[HS_BPF_MAX_FRAMES];
};

#define HS_EVENT_HDR_SIZE ((unsigned long)&((struct hs_event *)0)->frames)

/*
 * Counters in a per-CPU array, summed by the loader: events that never
 * reached it. (Truncated and unreadable stacks are counted by the loader
 * from each record's flags.)
 */
enum hs_counter {
	HS_CNT_RB_LOST_ALLOC,	/* ring buffer full: allocation dropped */
	HS_CNT_RB_LOST_FREE,	/* ring buffer full: free dropped */
	HS_CNT_MISSED_RETURN,	/* an entry whose return never came */
	HS_CNT_UNMATCHED_RETURN,/* a return with no entry (attach race) */
	HS_CNT_NO_STATE,	/* task storage unavailable: event dropped */
	HS_CNT_BAD_OUTPTR,	/* posix_memalign out-pointer unreadable: dropped */
	HS_CNT_RB_LOST_TASK,	/* ring buffer full: a process exit or exec dropped */
	HS_CNT__MAX,
};

#endif /* HEAPSNOOP_EVENT_H */

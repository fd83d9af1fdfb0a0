/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * calls.h - the allocator call in flight on each thread, from its entry
 * probe to its return probe (docs/DESIGN.md, "In-flight state is a thread
 * slot").
 *
 * In-flight state is keyed by the stack pointer at entry, so an allocator
 * call made inside another (realloc(NULL) -> malloc) or tail-jumped to
 * (reallocarray -> realloc) is seen as nested and yields no record of its
 * own. It lives in a thread's slot of an array indexed by thread id (a
 * look-up the verifier inlines), or in the calls map (an LRU hash keyed by
 * thread id) when another thread's call holds that slot; without BPF
 * atomics (before 5.12), in the calls map alone: task storage (freed with
 * the task) where uprobes may use it, else that LRU hash.
 *
 * The state's age tells a missed return from a nested call (stale_clock).
 * A thread that dies inside a call has it ended at its exit
 * (gen_thread_exit), so that its slot is free for the slot's other threads.
 *
 * Maps: calls, thread_slots.
 */
#ifndef HEAPSNOOP_BPF_CALLS_H
#define HEAPSNOOP_BPF_CALLS_H

#include "record.h"

/* The outermost allocator call in flight on a task. */
struct call_state {
	__u64 sp;	/* stack pointer at its entry: its return address */
	__u64 entry_pos;	/* ring_pos() at its entry: the realloc family only, else 0 */
	__u64 age;	/* stale_clock() at its entry */
	__u64 args[3];
	__u32 func;	/* enum hs_func */
	__u32 depth;	/* its own entry + nested entries not yet returned */
	__u32 emitted;	/* its record is out (a tail-callee returned first) */
	__u32 sampling;	/* sample_left holds a drawn gap */
	__s64 sample_left;	/* --sample-bytes: bytes before the next point */
	/* At its return: its record's interpreter flags and frames (interp.h). */
	__u32 interp_flags;
	__u32 interp_frames;
	/*
	 * Load shed: the thread whose exact records these are (a slot's state
	 * outlives its call, and the slot is shared), its epoch, its count.
	 */
	__u32 shed_tid;
	__u32 shed_epoch;
	__u32 shed_exact;
	__u32 pad;
};

/*
 * task -> the call in flight on it; freed by the kernel at task exit.
 * With thread slots (their overflow), or without task storage (before
 * 5.12, or where uprobes may not use it), the loader makes this an LRU
 * hash: thread id -> the call in flight. An exited
 * thread's entry then stays until evicted; a thread id reused while its
 * entry is still there finds a stale call, which the entry probe takes as
 * a missed return unless its stack pointer and age say it is nested.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_state);
} calls SEC(".maps");

static const struct call_state no_call;

/*
 * One thread's in-flight call, the thread chosen by its id modulo the
 * table's size. A task-storage look-up costs ~45 ns a probe in this VM
 * (docs/PERFORMANCE.md); this one is a load.
 *
 * @owner is claimed with a compare-and-exchange, only while it is idle;
 * a busy slot is written by its owner alone, and released (idle) with an
 * exchange, a full barrier, once the call's last return is done with it.
 * A thread whose slot another thread's call holds keeps its call in the
 * calls map instead, counted in @spilled until that call's last return, so
 * that while any such call is in flight the slot's threads look there
 * first. A thread that ends inside a call (its return never comes) gives
 * its slot back at its exit (thread_exit).
 *
 * The calls map is then an LRU hash, not task storage: task storage
 * refuses to create a thread's entry while another program on the same
 * CPU is inside a task-storage helper, which a program preempted there
 * (a kernel with full preemption) can be for as long as it waits (counted
 * as HS_CNT_NO_STATE: 63 of 4000 calls in the matrix's preempt=full
 * guest). An LRU hash's update holds its lock with preemption off.
 */
struct thread_slot {
	__u64 owner;	/* thread id << 32, | SLOT_BUSY while its call is in flight */
	__u64 spilled;	/* in-flight calls of the slot's threads in the calls map */
	struct call_state st;
};

#define SLOT_BUSY 1ULL

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HS_THREAD_SLOTS);	/* the loader's --thread-slots */
	__type(key, __u32);
	__type(value, struct thread_slot);
} thread_slots SEC(".maps");

/* Where a thread's in-flight call lives: its slot, or the calls map. */
struct call_ref {
	struct call_state *st;		/* NULL: none */
	struct thread_slot *slot;	/* the thread's slot; NULL without slots */
	bool spilled;			/* @st is in the calls map, in slot->spilled */
};

/*
 * The current thread's (@id's) in-flight call state; with @create, made if
 * there is none. NULL: none, or no room (the LRU hash is full of in-flight
 * calls).
 */
static __always_inline struct call_state *call_state_get(__u64 id, bool create)
{
	struct call_state *st;
	__u32 tid;

	if (have_task_storage)
		return bpf_task_storage_get(&calls, bpf_get_current_task_btf(), 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = (__u32)id;
	st = bpf_map_lookup_elem(&calls, &tid);
	if (st || !create)
		return st;
	bpf_map_update_elem(&calls, &tid, &no_call, BPF_NOEXIST);
	return bpf_map_lookup_elem(&calls, &tid);
}

static __always_inline struct thread_slot *thread_slot(__u64 id)
{
	__u32 k = (__u32)id & thread_slot_mask;

	return bpf_map_lookup_elem(&thread_slots, &k);
}

static __always_inline __u64 slot_owner(__u64 id, __u64 busy)
{
	return id << 32 | busy;
}

/*
 * What the entry and the return probe look up first, for thread @id: without
 * slots, the calls map (@create: made if missing); else the thread's slot,
 * and its state if the slot is busy with this thread's call. Returns true
 * when that decides @r (ref.st NULL: none, or no room), false when the
 * slot is idle or another thread's (@r->slot set).
 */
static __always_inline bool call_own(__u64 id, bool create, struct call_ref *r)
{
	r->st = NULL;
	r->slot = NULL;
	r->spilled = false;
	if (!have_slots) {
		r->st = call_state_get(id, create);
		return true;
	}
	r->slot = thread_slot(id);
	if (!r->slot)
		return true;
	if (r->slot->owner == slot_owner(id, SLOT_BUSY))
		r->st = &r->slot->st;
	return r->st != NULL;
}

/*
 * The current thread's (@id's) in-flight call for its entry probe: a call
 * already in flight (its depth set), else where a new one goes, its depth
 * 0: the thread's slot if idle or its own, else the calls map. ref.st NULL:
 * no room (the LRU hash is full of in-flight calls).
 */
static __always_inline struct call_ref call_enter(__u64 id)
{
	struct call_ref r;
	struct thread_slot *sl;
	__u64 w;

	if (call_own(id, true, &r))
		return r;
	sl = r.slot;
	if (sl->spilled) {
		/* One of the slot's threads has its call in the calls map: this one? */
		r.st = call_state_get(id, false);
		if (r.st && r.st->depth) {
			r.spilled = true;
			return r;
		}
	}
	w = sl->owner;
	if (!(w & SLOT_BUSY) &&
	    __sync_val_compare_and_swap(&sl->owner, w, slot_owner(id, SLOT_BUSY)) == w) {
		r.st = &sl->st;	/* idle: its depth is 0 */
		r.spilled = false;
		return r;
	}
	r.st = call_state_get(id, true);
	r.spilled = true;
	return r;
}

/*
 * Thread @id exec'd: the exact records it had while shedding (alloc.h
 * shed_keep) were its old image's (a shell's child between fork and exec
 * makes dozens), and start again for the new one, at its next allocation.
 * Its state in its slot, if the slot's last shedding was its own, and in
 * the calls map. A slot another thread's call holds is written only where
 * the shedding was this thread's: a heuristic's count, raced harmlessly.
 */
static __always_inline void shed_forget(__u64 id)
{
	struct call_state *st;

	/* Not shedding (-p and a command held; the loader sets it before any program runs). */
	if (!shed_mark)
		return;
	if (have_slots) {
		struct thread_slot *sl = thread_slot(id);

		if (sl && sl->st.shed_tid == (__u32)id)
			sl->st.shed_tid = 0;
	}
	st = call_state_get(id, false);
	if (st && st->shed_tid == (__u32)id)
		st->shed_tid = 0;
}

/* The current thread's (@id's) in-flight call for its return probe. */
static __always_inline struct call_ref call_exit(__u64 id)
{
	struct call_ref r;

	if (call_own(id, false, &r))
		return r;
	if (r.slot->spilled) {
		r.st = call_state_get(id, false);
		r.spilled = true;
	}
	return r;
}

/*
 * A call of @r's was begun (its depth went from 0 to 1): one in the calls
 * map is counted in its slot's spilled.
 */
static __always_inline void call_begun(struct call_ref *r)
{
	if (r->spilled && r->slot) {
		__sync_fetch_and_add(&r->slot->spilled, 1);
		count(HS_CNT_SPILLED);
	}
}

/*
 * The last return of @r's call (its depth back to 0) is done with its
 * state: its slot idle again (an exchange: the loads of the state before
 * it stay before it), or its state in the calls map no longer counted.
 */
static __always_inline void call_done(struct call_ref *r, __u64 id)
{
	if (!r->slot)
		return;
	if (r->spilled)
		__sync_fetch_and_sub(&r->slot->spilled, 1);
	else
		__sync_lock_test_and_set(&r->slot->owner, slot_owner(id, 0));
}

/*
 * The clock of the staleness check (HS_STALE_JIFFIES): jiffies, which the
 * verifier inlines as a load; a precise clock read costs ~45 ns per call
 * in a VM (docs/PERFORMANCE.md). Where uprobes may not read jiffies,
 * ktime in HZ-independent units of 4 ms (2^22 ns).
 */
static __always_inline __u64 stale_clock(void)
{
	if (have_jiffies)
		return bpf_jiffies64();
	return bpf_ktime_get_ns() >> 22;
}

/*
 * Any thread's exit, in every mode while thread slots are used: a thread
 * that dies inside an allocator call (another thread's exit_group() ended
 * the process, or it was cancelled there) never returns from it. Its call
 * is ended as its last return would end it (depth 0, call_done()): its
 * slot made idle, or its state in the calls map taken out of the slot's
 * spilled count and deleted, so that the slot's other threads (of any
 * process: slots are shared by thread id modulo their number) keep the
 * fast path. The exiting thread is current, and a busy slot is written by
 * its owner alone.
 */
static __always_inline int gen_thread_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct call_ref r;

	if (empty_probes)
		return 0;
	r = call_exit(id);
	/* Its own busy slot; or, spilled, a call still in flight. */
	if (!r.slot || !r.st || (r.spilled && !r.st->depth))
		return 0;
	r.st->depth = 0;
	call_done(&r, id);
	if (r.spilled)
		bpf_map_delete_elem(&calls, &tid);
	count(HS_CNT_DIED_IN_CALL);
	return 0;
}

#endif /* HEAPSNOOP_BPF_CALLS_H */

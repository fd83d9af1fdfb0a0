// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * heapsnoop.bpf.c - uprobes and uretprobes on a process's allocator.
 *
 * Entry probes record the arguments of the outermost allocator call of each
 * thread; the return probe of that call emits one HS_EV_ALLOC. By default
 * (--unwind dwarf) the record carries the caller's registers and its stack,
 * copied straight into the ring buffer, for the loader to unwind by each
 * module's CFI (user/unwind.c); with --unwind fp the stack is walked here
 * along the frame-pointer chain inside one bulk copy of the top of the
 * stack. free() writes an entry in its CPU's log (free_logs), or where
 * that cannot be, emits HS_EV_FREE. No stack map: every stack travels in its
 * event, so nothing fills up silently; every event the ring buffer refuses
 * is counted.
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
 * Runs from Linux 5.10: what newer kernels add (task storage, the BTF
 * current task, bpf_find_vma, jiffies) is probed by the loader
 * (user/kfeatures.c) and chosen here through read-only globals, which the
 * verifier treats as constants, so the branch a kernel cannot verify is
 * dead code to it. bpf_find_vma's callback is a BPF_PSEUDO_FUNC reference
 * that kernels before 5.13 reject even in dead code: it lives only in
 * alloc_exit, and alloc_exit_compat is the same program without it.
 *
 * Each program's cost per run is measured (bench/progcost.sh); what each
 * change bought is in docs/PERFORMANCE.md.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* One load or store the compiler neither drops, splits nor moves. */
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

#include "heapsnoop/event.h"
#include "arch.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. */
const volatile __u32 self_tgid;		/* never trace heapsnoop itself */
const volatile __u32 max_frames = HS_BPF_MAX_FRAMES;
/* Wake the consumer once this many bytes wait in the ring buffer. */
const volatile __u64 wakeup_bytes = 256 << 10;
/*
 * ... a free only once this many do (half the ring): the allocations'
 * records wake it soon enough, and a forced wakeup costs a free ~15 ns on
 * average (docs/PERFORMANCE.md); a storm of frees alone still wakes it
 * before the ring fills.
 */
const volatile __u64 free_wakeup_bytes = 8 << 20;
/* Benchmark floor (--empty-probes): every program returns at once. */
const volatile bool empty_probes;
/*
 * --empty-probes=read: the allocation's return reads 8 bytes of the
 * caller's stack first, which is all it does: the kernel's cost of one
 * read of user memory, the floor of any record that carries the stack
 * (docs/PERFORMANCE.md, "What one read of the user stack costs").
 */
const volatile bool empty_read;
/*
 * --unwind dwarf: send the top of the caller's stack and its registers
 * (at most stack_copy bytes, a power of two) for the loader to unwind by
 * CFI, instead of walking frame pointers here.
 */
const volatile bool unwind_dwarf;
const volatile __u32 stack_copy = HS_USER_STACK_DEFAULT;

/*
 * What the running kernel has (user/kfeatures.c probes it): the calls map
 * is task storage (else an LRU hash by thread id; always so with thread
 * slots), and bpf_get_current_task_btf() (else bpf_get_current_task() and
 * CO-RE reads).
 */
const volatile bool have_task_storage = true;
const volatile bool have_task_btf = true;
/*
 * bpf_jiffies64() usable from uprobes (the verifier inlines it as a load):
 * the staleness clock of an in-flight call; else bpf_ktime_get_ns().
 */
const volatile bool have_jiffies = true;
/*
 * BPF atomics (5.12: cmpxchg, xchg), which the thread slots are claimed
 * with. Without them every in-flight call is in the calls map.
 */
const volatile bool have_slots = true;
/*
 * Plain frees go to their CPU's log (free_logs), not to the ring buffer:
 * BPF atomics, and not --empty-probes.
 */
const volatile bool have_free_log = true;
/* thread_slots' size - 1: a power of two less one (--thread-slots). */
const volatile __u32 thread_slot_mask = HS_THREAD_SLOTS - 1;

/*
 * Filters (--comm, --uid, --pid-filter, --min-size/--max-size). A process
 * a filter excludes returns at the top of every probe, before any state.
 */
const volatile bool filter_comm;
const volatile char comm[16];		/* the process's name, decided at its start */
const volatile __u32 filter_uid = (__u32)-1;
const volatile bool filter_pids;	/* only the tgids in pid_filter */
const volatile bool follow_forks;	/* -f: a traced process's children too */
const volatile __u64 min_size;
const volatile __u64 max_size = (__u64)-1;
/*
 * --sample-bytes: one allocation per sample_bytes bytes on average
 * (Poisson); 0: every one. The gaps are drawn from the exponential's
 * quantiles, which the loader fills (user/common/sampling.c, 16.16).
 */
const volatile __u64 sample_bytes;
#define HS_SAMPLE_GAPS 1024
const volatile __u32 sample_gap[HS_SAMPLE_GAPS];

/*
 * Set by the loader once every probe of a library is attached: before
 * that, calls begun before tracing return without an entry seen, and are
 * not losses.
 */
bool armed;

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

/* Events to the loader; its size is set by the loader (--ringbuf-size). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/*
 * System-wide mode: the per-CPU perf events whose mmap, comm and fork
 * records (the kernel's, not ours) the loader reads with libbpf's raw
 * perf buffer (user/mmaprec.c). No program writes to it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} mmap_records SEC(".maps");

/*
 * --unwind fp: the record being built and the bulk copy of the stack's
 * top, per CPU. A uprobe's program can be preempted (a kernel with full or
 * lazy preemption) and another program then run on the same CPU, so the
 * scratch names its owner (the thread's bpf_get_current_pid_tgid()):
 * claimed before it is written, checked once the record is copied out of
 * it; a record built while another program took the scratch is thrown
 * away (bpf_ringbuf_discard) and walked again, straight into the ring
 * buffer, by single reads. No two programs of one thread run at once, so
 * the id is unique among the programs that can interleave.
 */
struct scratch {
	__u64 owner;
	struct hs_event ev;
	__u8 stack[HS_FP_STACK_COPY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

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

/*
 * --pid-filter (-a), or the traced processes (-p and launch mode: the
 * target, and with -f those it forked): tgid -> 1.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/*
 * --comm: the processes whose name matched when they started (fork) or
 * exec'd, and those the loader found so named when tracing began: tgid
 * -> 1. Decided once, so a process that renames itself later
 * (prctl(PR_SET_NAME)) keeps being traced, frees included, and one that
 * takes the name later is not half traced.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, __u8);
} comm_pids SEC(".maps");

/*
 * Bumped by whatever changes pid_filter or comm_pids: the tracepoints
 * below, and the loader (bpfload.c) after it adds a process. A verdict
 * cached with an older value is not used.
 */
__u64 filter_gen;

/*
 * The last filter verdict on this CPU, in one word so that it is written
 * and read whole (a preempted probe cannot leave half of one): tgid in
 * bits 0-21 (pids are below 2^22), traced in bit 22, filter_gen above.
 * Lookups of this map are inlined by the verifier; the hash maps' cost
 * ~50 ns each, and every probe of an allocation asked them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} filter_cache SEC(".maps");

#define FC_TGID_BITS 22
#define FC_TRACED (1ULL << FC_TGID_BITS)
#define FC_GEN_SHIFT (FC_TGID_BITS + 1)

/* After a change to pid_filter or comm_pids: cached verdicts are stale. */
static __always_inline void filter_changed(void)
{
	__sync_fetch_and_add(&filter_gen, 1);
}

/* Is process @tgid traced by --pid-filter/-f and --comm (the maps)? */
static __always_inline bool filter_maps_trace(__u32 tgid)
{
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &tgid))
		return false;
	return !filter_comm || bpf_map_lookup_elem(&comm_pids, &tgid);
}

/*
 * filter_maps_trace(), from this CPU's cached verdict when it is for
 * @tgid and no change came since: a CPU runs one process's calls after
 * another's, so nearly every probe hits. The generation is read before
 * the maps, so a change during the look-ups leaves a verdict already stale.
 */
static __always_inline bool filter_trace(__u32 tgid)
{
	__u64 gen = *(volatile __u64 *)&filter_gen, w;
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&filter_cache, &zero);
	bool traced;

	if (c) {
		w = *c;
		if ((w & (FC_TRACED - 1)) == tgid && w >> FC_GEN_SHIFT == gen << FC_GEN_SHIFT >> FC_GEN_SHIFT)
			return w & FC_TRACED;
	}
	traced = filter_maps_trace(tgid);
	if (c && tgid < FC_TRACED)
		*c = gen << FC_GEN_SHIFT | (traced ? FC_TRACED : 0) | tgid;
	return traced;
}

/* The current task: a BTF pointer where the kernel has one (5.11). */
static __always_inline struct task_struct *current_task(void)
{
	if (have_task_btf)
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/* Is @p's name (its comm) the one --comm gave? */
static __always_inline bool comm_matches(struct task_struct *p)
{
	char name[16];

	if (bpf_probe_read_kernel(name, sizeof(name), &p->comm))
		return false;
	for (int i = 0; i < 16; i++) {
		if (name[i] != comm[i])
			return false;
		if (!name[i])
			break;
	}
	return true;
}

/*
 * Is the current process, @id (bpf_get_current_pid_tgid()), not to be
 * traced: heapsnoop itself, or filtered?
 */
static __always_inline bool skip_task(__u64 id)
{
	__u32 tgid = id >> 32;

	if (self_tgid && tgid == self_tgid)
		return true;
	if (filter_uid != (__u32)-1 && (__u32)bpf_get_current_uid_gid() != filter_uid)
		return true;
	return (filter_pids || filter_comm) && !filter_trace(tgid);
}

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
 * Does the call of @func need its place in the stream of records? Only the
 * realloc family: its old block is released only if it was allocated
 * before the call began (HS_EV_FREE). A constant per program.
 */
static __always_inline bool needs_entry_pos(enum hs_func func)
{
	return func == HS_FN_REALLOC || func == HS_FN_REALLOCARRAY;
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

static __always_inline int gen_alloc_enter(struct pt_regs *ctx, enum hs_func func,
					   __u64 a0, __u64 a1, __u64 a2)
{
	__u64 sp = PT_REGS_SP(ctx), id, now;
	struct call_state *st;
	struct call_ref r;

	if (empty_probes)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (skip_task(id))
		return 0;
	now = stale_clock();
	r = call_enter(id);
	st = r.st;
	if (!st) {
		count(HS_CNT_NO_STATE);
		return 0;
	}
	if (st->depth) {
		if (sp <= st->sp && now - st->age < HS_STALE_JIFFIES) {
			/* Called from inside the outer call, or tail-jumped to. */
			st->depth++;
			return 0;
		}
		if (armed)
			count(HS_CNT_MISSED_RETURN);
	} else {
		call_begun(&r);
	}
	st->sp = sp;
	st->age = now;
	st->entry_pos = needs_entry_pos(func) ? ring_pos() : 0;
	st->func = func;
	st->args[0] = a0;
	st->args[1] = a1;
	st->args[2] = a2;
	st->depth = 1;
	st->emitted = 0;
	return 0;
}

/*
 * Walk the frame-pointer chain from the return into @ev: @ip is the call
 * site in the allocator's caller, @fp that caller's frame pointer. Frames
 * inside @stack, the bulk copy of [sp, sp + HS_FP_STACK_COPY), if @copied,
 * cost nothing; the rest one read each. (@copied apart from @stack, which
 * is then never NULL: verifiers before 6.x lose a pointer's NULL check
 * across a loop.)
 */
static __always_inline void walk_stack(struct hs_event *ev, const __u8 *stack, bool copied,
				       __u64 ip, __u64 sp, __u64 fp)
{
	__u32 n = 0;

	ev->frames[n++] = ip;
	for (int i = 1; i < HS_BPF_MAX_FRAMES; i++) {
		__u64 pair[2], off = fp - sp;

		if (i >= max_frames) {
			if (fp)
				ev->flags |= HS_EVF_TRUNCATED;
			break;
		}
		/* The chain must climb the stack, 8-aligned; 0 ends it. */
		if (!fp || (fp & 7) || fp < sp)
			break;
		if (copied && off <= HS_FP_STACK_COPY - sizeof(pair)) {
			pair[0] = *(__u64 *)(stack + off);
			pair[1] = *(__u64 *)(stack + off + 8);
		} else if (bpf_probe_read_user(pair, sizeof(pair), (void *)fp)) {
			ev->flags |= HS_EVF_STACK_FAULT;
			break;
		}
		if (!pair[1])
			break;
		/* Not a user address: the frame pointer register held data. */
		if (!HS_RA_IS_USER(pair[1])) {
			ev->flags |= HS_EVF_STACK_FAULT;
			break;
		}
		/* arm64: a return address signed by PAC, its signature off. */
		pair[1] &= HS_RA_MASK;
		ev->frames[n++ & (HS_BPF_MAX_FRAMES - 1)] = pair[1];
		if (pair[0] <= fp)
			break;
		fp = pair[0];
	}
	ev->nr_frames = n;
}

static __always_inline struct scratch *scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch_map, &zero);
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

#include "interp.h"

/* The fields of an allocation's record, from its call's state. */
static __always_inline void fill_alloc(struct hs_event *ev, __u64 id, struct call_state *st,
				       __u64 addr, __u64 size, __u64 old)
{
	fill_header(ev, id, HS_EV_ALLOC, (__u16)st->func, addr, st->entry_pos);
	ev->flags = st->interp_flags;
	ev->interp_frames = st->interp_frames;
	ev->ts = 0;	/* its place in the ring buffer orders it */
	ev->old_addr = old;
	ev->size = size;
}

/*
 * One struct hs_free_log per possible CPU (the loader sets max_entries),
 * mapped by the loader (user/tracer/freelog.c), which takes the entries.
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
 * (the loader takes an entry once its stamp is set: bpf/arch.h's
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

struct vma_end_ctx {
	__u64 end;
};

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_end_ctx *)data)->end = vma->vm_end;
	return 0;
}

/*
 * Where the stack holding @sp ends (its highest address + 1), so that the
 * copy takes no more than the frames there are:
 *  - the main thread: mm->start_stack (argc; argv and the environment are
 *    above it);
 *  - a thread of glibc or musl: its thread pointer (x86-64's %fs base,
 *    arm64's tpidr_el0: bpf/arch.h), at or just above the thread
 *    descriptor that the C library puts at the top of the thread's stack
 *    mapping, above the stack;
 *  - else (an alternate signal stack, a coroutine): the end of the mapping
 *    holding @sp. bpf_find_vma() only tries the mmap lock, so under a
 *    concurrent mmap it fails: 0 then, "not known", as on kernels without
 *    it (@find_vma false).
 * @id is the thread's bpf_get_current_pid_tgid().
 */
static __always_inline __u64 stack_end(__u64 sp, __u64 id, bool find_vma)
{
	struct task_struct *t = current_task();
	struct vma_end_ctx c = { 0 };
	__u64 end;

	/*
	 * A BTF task pointer is read directly (a load the JIT guards), the
	 * other one through a helper call per field: bpf_probe_read_kernel.
	 */
	if (id >> 32 == (__u32)id) {
		end = have_task_btf ? t->mm->start_stack : BPF_CORE_READ(t, mm, start_stack);
		if (sp < end)
			return end;
	}
	end = HS_THREAD_POINTER(t, have_task_btf);
	if (sp < end && end - sp <= HS_USER_STACK_MAX * 256ULL)
		return end;
	/* alloc_exit_compat: no bpf_find_vma (5.17) on this kernel. */
	if (!find_vma || bpf_find_vma(bpf_get_current_task_btf(), sp, vma_end_cb, &c, 0))
		return 0;
	return c.end;
}

/*
 * Read @n bytes of the user stack at @sp into @dst, a record with room for
 * @room (a constant). The clamp is for verifiers before 5.16, which lose a
 * scalar's bounds when it is spilled to the stack across helper calls: the
 * size must be bounded by the record's room in the register passed.
 */
static __always_inline long read_user_stack(void *dst, __u64 n, const __u64 room, __u64 sp)
{
	barrier_var(n);
	if (n > room)
		n = room;
	return bpf_probe_read_user(dst, n, (void *)sp);
}

/*
 * The copy of @n bytes at @sp faulted: read the stack page by page from
 * the page holding @sp into @us->data, each page on its own, a page not
 * there left as zeros and its bit set in @us->holes, so the unwinder goes
 * on past a page nobody touched wherever the slots it needs are in pages
 * that are there. Each page lands at a constant offset (data[0] is the
 * page's start, @us->skip bytes below @sp): what verifiers before 5.16
 * can check. At most @room bytes (a constant, a multiple of the page).
 */
static __always_inline void read_user_pages(struct hs_user_stack *us, __u64 sp, __u64 n,
					    const __u64 room)
{
	__u64 base = sp & ~(HS_PAGE_SIZE - 1), end = sp + n;
	__u32 holes = 0, size = 0;

#pragma unroll
	for (int i = 0; i < (int)(room / HS_PAGE_SIZE); i++) {
		__u64 page = base + (__u64)i * HS_PAGE_SIZE;

		if (page >= end)
			break;
		if (bpf_probe_read_user(us->data + i * HS_PAGE_SIZE, HS_PAGE_SIZE, (void *)page))
			holes |= 1u << i;
		size += HS_PAGE_SIZE;
	}
	us->skip = (__u32)(sp - base);
	us->holes = holes;
	us->size = size;
}

/*
 * Send an allocation's record with @n bytes of stack, in a record of the
 * size class @room (a constant: the ring buffer wants constant sizes).
 */
static __always_inline void send_user_stack(struct pt_regs *ctx, __u64 id, struct call_state *st,
					    __u64 addr, __u64 size, __u64 old, __u64 sp,
					    __u64 want, __u64 n, const __u64 room)
{
	struct hs_user_stack *us;
	struct hs_event *ev;

	ev = bpf_ringbuf_reserve(&events, HS_EVENT_HDR_SIZE + sizeof(*us) + room, 0);
	if (!ev) {
		count(HS_CNT_RB_LOST_ALLOC);
		return;
	}
	fill_alloc(ev, id, st, addr, size, old);
	ev->flags |= HS_EVF_USER_STACK;
	us = (void *)ev + HS_EVENT_HDR_SIZE;
	hs_copy_uregs(us->regs, ctx);
	us->regs[HS_UREG_SP] = sp;
	us->want = want > 0xffffffffULL ? 0xffffffffU : (__u32)want;
	if (n > room)
		n = room;
	us->skip = 0;
	us->holes = 0;
	/*
	 * A page of the stack that was never touched (a large local array no
	 * one wrote) is not present, and a BPF read does not fault it in: the
	 * whole read fails. Then read page by page (read_user_pages), or, in
	 * a class smaller than a page, take the lower half, and so on: the
	 * frames below that page are still found, and the stack is marked
	 * unreadable past them (want = size: the walk ran out of stack, not
	 * of copy).
	 */
	if (read_user_stack(us->data, n, room, sp)) {
		if (room >= HS_PAGE_SIZE) {
			read_user_pages(us, sp, n, room);
			bpf_ringbuf_submit(ev, wakeup_flags());
			return;
		}
		ev->flags |= HS_EVF_STACK_FAULT;
		for (int i = 0; i < 8; i++) {
			n >>= 1;
			if (n < HS_USER_STACK_MIN) {
				n = 0;
				break;
			}
			if (!read_user_stack(us->data, n, room, sp))
				break;
		}
		/*
		 * Less than the smallest class: the caller's frames may still
		 * sit in the page holding sp (present: the call wrote its return
		 * address there). Read to the end of that page.
		 */
		if (!n) {
			__u64 rest = HS_PAGE_SIZE - (sp & (HS_PAGE_SIZE - 1));

			n = rest < room ? rest : room;
			if (read_user_stack(us->data, n, room, sp))
				n = 0;
		}
		us->want = (__u32)n;
	}
	us->size = (__u32)n;
	bpf_ringbuf_submit(ev, wakeup_flags());
}

/*
 * --unwind dwarf: the allocation's record carries the caller's registers
 * and stack (struct hs_user_stack), copied straight into the ring buffer,
 * in the smallest size class (a power of two) that holds the stack or
 * --stack-copy.
 */
static __always_inline void emit_alloc_user_stack(struct pt_regs *ctx, __u64 id,
						  struct call_state *st, __u64 addr, __u64 size,
						  __u64 old, bool find_vma)
{
	__u64 sp = PT_REGS_SP(ctx), end = stack_end(sp, id, find_vma), n;
	/* Not known: as much as allowed, which may fault at the stack's end. */
	__u64 want = end > sp ? end - sp : stack_copy;

	n = want < stack_copy ? want : stack_copy;
#define SIZE_CLASS(room)							\
	if (n <= (room) || stack_copy <= (room)) {				\
		send_user_stack(ctx, id, st, addr, size, old, sp, want, n, room); \
		return;								\
	}
	SIZE_CLASS(512)
	SIZE_CLASS(1024)
	SIZE_CLASS(2048)
	SIZE_CLASS(4096)
	SIZE_CLASS(8192)
	SIZE_CLASS(16384)
	SIZE_CLASS(32768)
#undef SIZE_CLASS
	send_user_stack(ctx, id, st, addr, size, old, sp, want, n, HS_USER_STACK_MAX);
}

/* An exponential gap of mean sample_bytes. */
static __always_inline __s64 sample_gap_draw(void)
{
	__u32 i = bpf_get_prandom_u32() & (HS_SAMPLE_GAPS - 1);

	return (__s64)((sample_bytes * sample_gap[i]) >> 16) + 1;
}

/*
 * --sample-bytes: does a sample point fall in these @size bytes of the
 * thread's allocations? The next one is a fresh gap past this allocation's
 * end (a Poisson process has no memory). An unsampled allocation costs
 * this and nothing more: no stack, no record; its free reaches the loader,
 * which finds no such block and drops it.
 */
static __always_inline bool sampled(struct call_state *st, __u64 size)
{
	if (!st->sampling) {
		st->sampling = 1;
		st->sample_left = sample_gap_draw();
	}
	st->sample_left -= (__s64)size;
	if (st->sample_left > 0)
		return false;
	st->sample_left = sample_gap_draw();
	return true;
}

/*
 * --unwind fp, the slow path: the record built straight in the ring
 * buffer, in room for every frame, each frame read on its own.
 */
static __always_inline void emit_frames_by_reads(struct pt_regs *ctx, __u64 id,
						 struct call_state *st, __u64 addr, __u64 size,
						 __u64 old)
{
	struct hs_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		count(HS_CNT_RB_LOST_ALLOC);
		return;
	}
	fill_alloc(ev, id, st, addr, size, old);
	walk_stack(ev, NULL, false, PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx));
	bpf_ringbuf_submit(ev, wakeup_flags());
}

/*
 * Copy the record built in @s, with room for @room frames (a constant: a
 * size class), into the ring buffer, if @s is still thread @id's once
 * copied. Returns 0, or -1 when another program took @s meanwhile
 * (the copy is discarded).
 */
static __always_inline int send_frames(struct scratch *s, __u64 id, const __u32 room)
{
	__u64 bytes = HS_EVENT_HDR_SIZE + room * sizeof(__u64);
	struct hs_event *ev = bpf_ringbuf_reserve(&events, bytes, 0);

	if (!ev) {
		count(HS_CNT_RB_LOST_ALLOC);
		return 0;
	}
	__builtin_memcpy(ev, &s->ev, bytes);
	if (*(volatile __u64 *)&s->owner != id) {
		bpf_ringbuf_discard(ev, BPF_RB_NO_WAKEUP);
		return -1;
	}
	bpf_ringbuf_submit(ev, wakeup_flags());
	return 0;
}

/*
 * --unwind fp: the allocation's record with the frames walked here, in
 * the smallest size class that holds them.
 */
static __always_inline void emit_alloc_frames(struct pt_regs *ctx, __u64 id,
					      struct call_state *st, __u64 addr, __u64 size,
					      __u64 old)
{
	__u64 sp = PT_REGS_SP(ctx);
	struct scratch *s = scratch_get();
	bool copied;
	__u32 n;
	int err;

	if (!s) {
		emit_frames_by_reads(ctx, id, st, addr, size, old);
		return;
	}
	s->owner = id;
	fill_alloc(&s->ev, id, st, addr, size, old);
	copied = !bpf_probe_read_user(s->stack, sizeof(s->stack), (void *)sp);
	walk_stack(&s->ev, s->stack, copied, PT_REGS_IP(ctx), sp, PT_REGS_FP(ctx));
	n = s->ev.nr_frames;
	if (n <= 8)
		err = send_frames(s, id, 8);
	else if (n <= 16)
		err = send_frames(s, id, 16);
	else if (n <= 32)
		err = send_frames(s, id, 32);
	else
		err = send_frames(s, id, HS_BPF_MAX_FRAMES);
	/* Preempted by a program that took the scratch: again, by reads. */
	if (err)
		emit_frames_by_reads(ctx, id, st, addr, size, old);
}

/* Fill the event for a successful allocation and send it. */
static __always_inline void emit_alloc(struct pt_regs *ctx, __u64 id, struct call_state *st,
				       __u64 addr, __u64 size, __u64 old, bool find_vma)
{
	if (size < min_size || size > max_size || (sample_bytes && !sampled(st, size))) {
		/* Not traced; a realloc's old block is released all the same. */
		if (old)
			emit_free(id, old, st->entry_pos);
		return;
	}
	/* Its interpreter's frames first, in a record just before its own. */
	st->interp_flags = interp_emit(id, &st->interp_frames);
	if (unwind_dwarf) {
		emit_alloc_user_stack(ctx, id, st, addr, size, old, find_vma);
		return;
	}
	emit_alloc_frames(ctx, id, st, addr, size, old);
}

/*
 * What an allocator's return means, from its call's state: the block
 * allocated (*@addr, 0 for none), its size, and the block the call was
 * given (*@old, realloc family). A realloc-family call that returned NULL
 * with size 0 freed @old: *@addr 0 and *@old set. Kept apart from
 * emit_alloc(), so that the record's code (a copy per stack size class) is
 * inlined once, not once per allocator function.
 */
static __always_inline void alloc_result(struct call_state *st, __u64 ret, __u64 *addr,
					 __u64 *size, __u64 *old)
{
	__u64 out = 0;

	switch (st->func) {
	case HS_FN_MALLOC:
	case HS_FN_VALLOC:
	case HS_FN_PVALLOC:
		*addr = ret;
		*size = st->args[0];
		break;
	case HS_FN_CALLOC:
		/* Non-NULL means nmemb * size did not overflow. */
		*addr = ret;
		*size = st->args[0] * st->args[1];
		break;
	case HS_FN_ALIGNED_ALLOC:
	case HS_FN_MEMALIGN:
		*addr = ret;
		*size = st->args[1];
		break;
	case HS_FN_REALLOC:
		*addr = ret;
		*size = st->args[1];
		/* NULL with size 0 freed the block; NULL otherwise failed: old lives. */
		if (ret || !st->args[1])
			*old = st->args[0];
		break;
	case HS_FN_REALLOCARRAY:
		/*
		 * A non-NULL return means nmemb * size did not overflow; an
		 * overflow returns NULL and leaves the block live.
		 */
		*addr = ret;
		*size = st->args[1] * st->args[2];
		if (ret || !st->args[1] || !st->args[2])
			*old = st->args[0];
		break;
	case HS_FN_XALLOCX:
		/*
		 * Returns the block's real size: at least size when it was
		 * resized in place (the block now holds up to size + extra
		 * asked for), below it when it could not be (unchanged).
		 */
		if (ret < st->args[1])
			break;
		*addr = st->args[0];
		*old = st->args[0];
		*size = ret < st->args[1] + st->args[2] ? ret : st->args[1] + st->args[2];
		break;
	case HS_FN_POSIX_MEMALIGN:
		/* Returns 0 or an error number; the block is in *memptr. */
		if ((int)ret != 0)
			break;
		if (bpf_probe_read_user(&out, sizeof(out), (void *)st->args[0])) {
			count(HS_CNT_BAD_OUTPTR);
			break;
		}
		*addr = out;
		*size = st->args[2];
		break;
	default:
		break;
	}
}

/* @find_vma: a compile-time constant, false in alloc_exit_compat. */
static __always_inline int gen_alloc_exit(struct pt_regs *ctx, bool find_vma)
{
	__u64 ret = PT_REGS_RC(ctx), entry_sp = PT_REGS_SP(ctx) - HS_RET_SP_ADJ;
	__u64 addr = 0, size = 0, old = 0, id;
	struct call_state *st;
	struct call_ref r;

	if (empty_probes) {
		if (empty_read)
			bpf_probe_read_user(&addr, sizeof(addr), (void *)PT_REGS_SP(ctx));
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	if (skip_task(id))
		return 0;
	r = call_exit(id);
	st = r.st;
	if (!st || !st->depth) {
		if (armed)
			count(HS_CNT_UNMATCHED_RETURN);
		return 0;
	}
	st->depth--;
	/* A nested call's return, or the second of a tail-call pair. */
	if (entry_sp == st->sp && !st->emitted) {
		st->emitted = 1;
		alloc_result(st, ret, &addr, &size, &old);
		if (addr)
			emit_alloc(ctx, id, st, addr, size, old, find_vma);
		else if (old)
			emit_free(id, old, st->entry_pos);
	}
	if (!st->depth)
		call_done(&r, id);
	return 0;
}

/* One program per probed function: the loader attaches each by name. */
SEC("uprobe")
int BPF_KPROBE(malloc_enter, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_MALLOC, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(calloc_enter, __u64 nmemb, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_CALLOC, nmemb, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(realloc_enter, __u64 ptr, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_REALLOC, ptr, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(xallocx_enter, __u64 ptr, __u64 size, __u64 extra)
{
	return gen_alloc_enter(ctx, HS_FN_XALLOCX, ptr, size, extra);
}

SEC("uprobe")
int BPF_KPROBE(reallocarray_enter, __u64 ptr, __u64 nmemb, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_REALLOCARRAY, ptr, nmemb, size);
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_enter, __u64 memptr, __u64 align, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_POSIX_MEMALIGN, memptr, align, size);
}

SEC("uprobe")
int BPF_KPROBE(aligned_alloc_enter, __u64 align, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_ALIGNED_ALLOC, align, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(memalign_enter, __u64 align, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_MEMALIGN, align, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(valloc_enter, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_VALLOC, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(pvalloc_enter, __u64 size)
{
	return gen_alloc_enter(ctx, HS_FN_PVALLOC, size, 0, 0);
}

/*
 * Every allocating function returns through the same exit logic. The
 * loader loads one of the two: alloc_exit_compat where the kernel has no
 * bpf_find_vma (before 5.17).
 */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_exit)
{
	return gen_alloc_exit(ctx, true);
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_exit_compat)
{
	return gen_alloc_exit(ctx, false);
}

SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 ptr)
{
	__u64 id;

	if (empty_probes || !ptr)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (skip_task(id))
		return 0;
	if (!have_free_log || !log_free(id, ptr))
		emit_free(id, ptr, 0);
	return 0;
}

/*
 * Process lifetime, system-wide mode only (the loader attaches these with
 * -a): a process whose last thread exits, and an exec. Both travel in the
 * same ring buffer as the process's own events, so they come after them.
 */
static __always_inline void emit_task(__u32 type, struct task_struct *p)
{
	struct hs_event *ev;

	ev = bpf_ringbuf_reserve(&events, HS_EVENT_HDR_SIZE, 0);
	if (!ev) {
		count(HS_CNT_RB_LOST_TASK);
		return;
	}
	fill_header(ev, bpf_get_current_pid_tgid(), type, 0, 0, 0);
	ev->pid = BPF_CORE_READ(p, tgid);
	ev->tid = BPF_CORE_READ(p, pid);
	ev->ts = bpf_ktime_get_ns();
	ev->old_addr = 0;
	ev->size = 0;
	bpf_ringbuf_submit(ev, wakeup_flags());
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(task_exit, struct task_struct *p)
{
	__u32 tgid;

	/* The group's last thread: signal->live has dropped to 0. */
	if (empty_probes || BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	/* -f: its pid may be reused by a process nobody asked to trace. */
	tgid = BPF_CORE_READ(p, tgid);
	if (follow_forks)
		bpf_map_delete_elem(&pid_filter, &tgid);
	if (filter_comm)
		bpf_map_delete_elem(&comm_pids, &tgid);
	if (follow_forks || filter_comm)
		filter_changed();
	interp_gone(tgid);
	emit_task(HS_EV_EXIT, p);
	return 0;
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
SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit, struct task_struct *p)
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

/*
 * -p and launch mode: a traced process forked a new one (not a thread).
 * With -f the child is traced from its first allocation (the probes are
 * on every process, filtered by pid_filter); either way the loader hears
 * of it, to say so or to follow it.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(task_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct hs_event *ev;
	__u8 one = 1;
	bool followed;

	if (empty_probes || ctgid == ptgid || !bpf_map_lookup_elem(&pid_filter, &ptgid))
		return 0;
	followed = follow_forks && !bpf_map_update_elem(&pid_filter, &ctgid, &one, BPF_ANY);
	if (followed) {
		filter_changed();
		interp_forked(ptgid, ctgid);
	}
	ev = bpf_ringbuf_reserve(&events, HS_EVENT_HDR_SIZE, 0);
	if (!ev) {
		count(HS_CNT_RB_LOST_TASK);
		return 0;
	}
	fill_header(ev, bpf_get_current_pid_tgid(), HS_EV_FORK, 0, 0, 0);
	ev->pid = ctgid;
	ev->tid = BPF_CORE_READ(child, pid);
	ev->ts = bpf_ktime_get_ns();
	ev->old_addr = ptgid;
	ev->size = followed;
	bpf_ringbuf_submit(ev, wakeup_flags());
	return 0;
}

/* --comm: decide for process @tgid by the name of @p, its new image's. */
static __always_inline void comm_decide(__u32 tgid, struct task_struct *p)
{
	__u8 one = 1;

	if (!comm_matches(p))
		bpf_map_delete_elem(&comm_pids, &tgid);
	else if (bpf_map_update_elem(&comm_pids, &tgid, &one, BPF_ANY))
		count(HS_CNT_COMM_FULL);
	filter_changed();
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(task_exec, struct task_struct *p)
{
	if (empty_probes)
		return 0;
	/* The new image's name is set by now (begin_new_exec). */
	if (filter_comm)
		comm_decide(BPF_CORE_READ(p, tgid), p);
	interp_gone(BPF_CORE_READ(p, tgid));
	emit_task(HS_EV_EXEC, p);
	return 0;
}

/*
 * -a --comm: a new process (not a thread) is decided by the name it
 * starts with, the forking thread's.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(comm_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ctgid = BPF_CORE_READ(child, tgid);

	if (empty_probes || ctgid == BPF_CORE_READ(parent, tgid))
		return 0;
	comm_decide(ctgid, child);
	return 0;
}

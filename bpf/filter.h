/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * filter.h - which processes the probes trace, decided at the top of every
 * probe before any state (skip_task): never heapsnoop itself; --uid;
 * --pid-filter, -p, launch mode and -f (pid_filter); --comm (comm_pids,
 * decided once per process, at its fork or exec: comm_decide); the last
 * verdict cached per CPU while filter_gen is unchanged. Which allocations
 * are kept (--min-size/--max-size, --sample-bytes) is alloc.h's.
 *
 * Maps: pid_filter, comm_pids, filter_cache; the global filter_gen.
 */
#ifndef HEAPSNOOP_BPF_FILTER_H
#define HEAPSNOOP_BPF_FILTER_H

#include "record.h"

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

#endif /* HEAPSNOOP_BPF_FILTER_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * config.h - the loader's settings: read-only globals (.rodata) set before
 * load from the options (user/tracer/attach/bpfload.c) and from what the
 * running kernel has (user/tracer/attach/kfeatures.c, docs/KERNELS.md). The
 * verifier treats them as constants, so a branch that a setting or the
 * kernel rules out is dead code to it. And armed, which the loader writes
 * while the programs run.
 *
 * Owns no map.
 */
#ifndef HEAPSNOOP_BPF_CONFIG_H
#define HEAPSNOOP_BPF_CONFIG_H

#include "common.h"
#include "heapsnoop/interpframe.h"

/* Set by the loader before load. */
const volatile __u32 self_tgid;		/* never trace heapsnoop itself */
const volatile __u32 max_frames = HS_BPF_MAX_FRAMES;
/* arm64: a return address's address bits, its PAC signature off (user/common/pacmask.h). */
const volatile __u64 ra_mask = HS_RA_MASK;
/*
 * Python frames the walk reads at most (user/interp/python/python.bpf.h):
 * HS_INTERP_MAX_FRAMES, or HS_PY_WALK_OLD on a kernel before 6.2, whose
 * verifier follows each of the loop's turns with its branches and gives
 * up on alloc_exit past a million instructions (Linux 6.1, once 3.14's
 * frames were read); a deeper chain is marked cut there (bpfload.c).
 */
const volatile __u32 py_walk_bound = HS_INTERP_MAX_FRAMES;
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
 * What the running kernel has (user/tracer/attach/kfeatures.c probes it): the
 * calls map is task storage (else an LRU hash by thread id; always so with
 * thread slots), and bpf_get_current_task_btf() (else
 * bpf_get_current_task() and CO-RE reads).
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
/*
 * Stack tails (tail.h): the loader gives threads the tails of their deep
 * stacks, and the programs copy only what lies below one still in place.
 * --unwind dwarf, BPF atomics (arm64's acquire loads), and not --no-tails.
 */
const volatile bool have_tails;
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
 * --on-full sample (-a's default, and -p's or a command's when they
 * cannot be held): once shed_mark bytes wait in the ring buffer, an
 * allocation is recorded only as a sample, at a level one higher per
 * shed_step bytes more (alloc.h shed_keep); 0: never. Written by the
 * loader, which decides it once the target is known (after load).
 */
const volatile __u64 shed_step = 1;
__u64 shed_mark;

/*
 * Set by the loader once every probe of a library is attached: before
 * that, calls begun before tracing return without an entry seen, and are
 * not losses.
 */
bool armed;

#endif /* HEAPSNOOP_BPF_CONFIG_H */

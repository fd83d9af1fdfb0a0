// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * heapsnoop.bpf.c - uprobes and uretprobes on a process's allocator, and the
 * scheduler's tracepoints of process lifecycle: the programs, which the
 * loader attaches by name. What they do is in headers, one per concern,
 * each saying which maps it owns:
 *
 *   common.h    the kernel's types, libbpf's headers, event.h, arch.h
 *   config.h    the loader's settings (read-only globals)
 *   record.h    the ring buffer: the records' common fields, their order,
 *               the counters
 *   filter.h    which processes are traced
 *   calls.h     the allocator call in flight on each thread
 *   freelog.h   plain frees in their CPU's log
 *   stack.h     the allocation's record with its stack (dwarf and fp)
 *   alloc.h     the allocator's calls: entry and return
 *   task.h      process lifecycle: exit, exec, fork
 *
 * Entry probes record the arguments of the outermost allocator call of each
 * thread; the return probe of that call emits one HS_EV_ALLOC with its
 * stack. free() writes an entry in its CPU's log (free_logs), or where
 * that cannot be, emits HS_EV_FREE.
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
#include "alloc.h"
#include "filter.h"
#include "freelog.h"
#include "task.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
	if (followed)
		filter_changed();
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

SEC("tp_btf/sched_process_exec")
int BPF_PROG(task_exec, struct task_struct *p)
{
	if (empty_probes)
		return 0;
	/* The new image's name is set by now (begin_new_exec). */
	if (filter_comm)
		comm_decide(BPF_CORE_READ(p, tgid), p);
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

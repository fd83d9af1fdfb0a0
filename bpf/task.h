/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * task.h - process lifecycle, the bodies of the scheduler's tracepoint
 * programs: a process's exit and exec (the filters forget or decide it,
 * the loader hears of it), a traced process's fork (-p, launch mode; -f
 * follows the child), a new process's name (-a --comm). A thread's exit
 * inside an allocator call is calls.h's (gen_thread_exit).
 *
 * Maps: mmap_records (system-wide mode's perf events, read by the loader;
 * no program writes to it).
 */
#ifndef HEAPSNOOP_BPF_TASK_H
#define HEAPSNOOP_BPF_TASK_H

#include "record.h"
#include "calls.h"
#include "filter.h"
#include "interp.bpf.h"

/*
 * System-wide mode: the per-CPU perf events whose mmap, comm and fork
 * records (the kernel's, not ours) the loader reads with libbpf's raw
 * perf buffer (user/tracer/track/mmaprec.c). No program writes to it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} mmap_records SEC(".maps");

/*
 * The record of a process whose last thread exits (-a, -f) or of an exec
 * (every mode). Both travel in the same ring buffer as the process's own
 * events, so they come after them.
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

/*
 * A process's last thread exits (-a, -f): the filters forget it, and the
 * loader hears of it after its own events.
 */
static __always_inline int gen_task_exit(struct task_struct *p)
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
 * -p and launch mode: a traced process forked a new one (not a thread).
 * With -f the child is traced from its first allocation (the probes are
 * on every process, filtered by pid_filter); either way the loader hears
 * of it, to say so or to follow it.
 */
static __always_inline int gen_task_fork(struct task_struct *parent, struct task_struct *child)
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

/* An exec: --comm decides again, and the loader hears of it. */
static __always_inline int gen_task_exec(struct task_struct *p)
{
	if (empty_probes)
		return 0;
	/* The new image's name is set by now (begin_new_exec). */
	if (filter_comm)
		comm_decide(BPF_CORE_READ(p, tgid), p);
	interp_gone(BPF_CORE_READ(p, tgid));
	shed_forget(bpf_get_current_pid_tgid());
	emit_task(HS_EV_EXEC, p);
	return 0;
}

/*
 * -a --comm: a new process (not a thread) is decided by the name it
 * starts with, the forking thread's.
 */
static __always_inline int gen_comm_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ctgid = BPF_CORE_READ(child, tgid);

	if (empty_probes || ctgid == BPF_CORE_READ(parent, tgid))
		return 0;
	comm_decide(ctgid, child);
	return 0;
}

#endif /* HEAPSNOOP_BPF_TASK_H */

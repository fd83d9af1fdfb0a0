/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * task.h - process lifecycle, from the scheduler's tracepoints: the
 * records of a process's exit and exec (system-wide mode) and of a traced
 * process's fork.
 *
 * Maps: mmap_records (system-wide mode's perf events, read by the loader;
 * no program writes to it).
 */
#ifndef HEAPSNOOP_BPF_TASK_H
#define HEAPSNOOP_BPF_TASK_H

#include "record.h"

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

#endif /* HEAPSNOOP_BPF_TASK_H */

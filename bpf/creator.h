/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * creator.h - who created a thread: when a traced process makes a thread
 * (the sched_process_fork tracepoint, in the creating thread, before the
 * new one runs), an HS_EV_THREAD record with the creating thread's user
 * registers as the clone syscall saved them (bpf_task_pt_regs, 5.15) and
 * its stack, copied as an allocation's is (stack.h), for the loader to
 * unwind by CFI through clone3 and pthread_create to the code that asked
 * for the thread, and to append to every stack of the new thread
 * (user/tracer/track/creators.c; docs/DESIGN.md, "Who created a thread").
 *
 * The record carries a stack copy in both --unwind modes: a frame-pointer
 * walk from inside clone3 skips pthread_create's caller (the C library
 * keeps no frame pointers; the first pointer found is that caller's, whose
 * return address is its own caller's), the very frame wanted.
 *
 * The record's @old_addr carries the creating thread's link register
 * (arm64's x30; 0 on x86-64): the clone wrappers are leaves, and on
 * arm64 a leaf's return address is there, not on the stack the record
 * copies, so the loader's step out of clone3 (trace.c's leaf_caller())
 * takes it from there.
 *
 * The tracepoint covers std::thread, raw clone and clone3, and old
 * glibc's libpthread alike, which a probe on pthread_create would not.
 *
 * Owns no map.
 */
#ifndef HEAPSNOOP_BPF_CREATOR_H
#define HEAPSNOOP_BPF_CREATOR_H

#include "stack.h"
#include "filter.h"

/*
 * -a: a thread of every process skip_task() lets through is followed;
 * otherwise those of the processes in pid_filter (-p, launch mode, -f).
 */
const volatile bool creators_all;

/*
 * @parent made @child. A new thread of a traced process (not a new
 * process: vfork and posix_spawn's CLONE_VM children are processes):
 * its creation, with the creating thread's registers and stack.
 */
static __always_inline int gen_thread_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctid = child->pid;
	__u64 id = bpf_get_current_pid_tgid();
	struct pt_regs *regs;

	if (empty_probes || child->tgid != ptgid || (__u32)(id >> 32) != ptgid)
		return 0;
	if (!bpf_map_lookup_elem(&pid_filter, &ptgid) && (!creators_all || skip_task(id)))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return 0;
	/*
	 * No bpf_find_vma (its callback is loaded only with alloc_exit): a
	 * stack that is neither a main thread's nor a C library thread's is
	 * copied up to a guess, as alloc_exit_compat's are.
	 */
	emit_user_stack(regs, HS_EV_THREAD, HS_CNT_RB_LOST_THREAD, id,
			(struct call_state *)&no_call, ctid, 0, HS_LINK_REG(regs), false);
	return 0;
}

#endif /* HEAPSNOOP_BPF_CREATOR_H */

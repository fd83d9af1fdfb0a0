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
 *   alloc.h     the allocator's calls: entry, return, free
 *   task.h      process lifecycle: exit, exec, fork
 *   interp.h    interpreter frames at an allocation, a code object's last
 *               look (python.h: CPython's walk)
 *   creator.h   a new thread's creation, with its creator's stack
 *
 * Entry probes record the arguments of the outermost allocator call of each
 * thread; the return probe of that call emits one HS_EV_ALLOC with its
 * stack. free() writes an entry in its CPU's log (free_logs), or where
 * that cannot be, emits HS_EV_FREE.
 *
 * Runs from Linux 5.10: what newer kernels add (task storage, the BTF
 * current task, bpf_find_vma, jiffies, atomics) is probed by the loader
 * (user/tracer/attach/kfeatures.c) and chosen through read-only globals
 * (config.h), which the verifier treats as constants, so the branch a
 * kernel cannot verify is dead code to it. bpf_find_vma's callback is a BPF_PSEUDO_FUNC reference
 * that kernels before 5.13 reject even in dead code: it lives only in
 * alloc_exit, and alloc_exit_compat is the same program without it.
 * Verifiers before 5.12 likewise refuse any atomic but an add, even in
 * dead code: there the loader rewrites the compare-and-exchanges and
 * exchanges into adds before loading (docs/KERNELS.md).
 *
 * Each program's cost per run is measured (bench/progcost.sh); what each
 * change bought is in docs/PERFORMANCE.md.
 */
#include "alloc.h"
#include "calls.h"
#include "task.h"
#include "interp.bpf.h"
#include "creator.h"

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
 * A lua_Alloc (LuaJIT's lj_alloc_f, found by the loader in lua_newstate's
 * code: user/interp/luajit/ljfind.c): (ud, ptr, osize, nsize), ud and
 * osize not needed.
 */
SEC("uprobe")
int BPF_KPROBE(lua_allocf_enter, __u64 ud, __u64 ptr, __u64 osize, __u64 nsize)
{
	return gen_alloc_enter(ctx, HS_FN_LUA_ALLOCF, ptr, nsize, 0);
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
	return gen_free_enter(ptr);
}

/*
 * Process lifetime, attached by mode (user/tracer/attach/bpfload.c,
 * user/tracer/session.c):
 * task_exec in every mode; task_exit with -a and -f; task_fork with -p and
 * in launch mode; comm_fork with -a --comm; thread_exit in every mode while
 * thread slots are used.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(task_exit, struct task_struct *p)
{
	return gen_task_exit(p);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit, struct task_struct *p)
{
	return gen_thread_exit();
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(task_fork, struct task_struct *parent, struct task_struct *child)
{
	return gen_task_fork(parent, child);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(task_exec, struct task_struct *p)
{
	return gen_task_exec(p);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(comm_fork, struct task_struct *parent, struct task_struct *child)
{
	return gen_comm_fork(parent, child);
}

/*
 * A traced process made a thread: its creator's stack (creator.h).
 * Loaded from 5.15 (bpf_task_pt_regs), attached in every mode.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(thread_fork, struct task_struct *parent, struct task_struct *child)
{
	return gen_thread_fork(parent, child);
}

/* The interpreter's code object destructor (interp.h). */
SEC("uprobe")
int BPF_KPROBE(interp_code_gone, __u64 co)
{
	return gen_interp_code_gone(co);
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * arch.bpf.h - the BPF side's architecture-specific reads, one per job, chosen
 * by clang's -D__TARGET_ARCH_x86 or _arm64 (the Makefile's ARCH); the
 * layout they fill is include/heapsnoop/arch.h's. docs/ARCH.md.
 *
 *   hs_copy_uregs(regs, ctx)   the registers of enum hs_ureg from a
 *                              uretprobe's pt_regs (the caller's, after
 *                              the return), the stack pointer apart
 *   HS_STORE_RELEASE(p, v)     *p = v after every store before it, as
 *                              another CPU sees them: x86-64's stores
 *                              are ordered (a plain store), arm64's an
 *                              exchange (BPF has no store-release before
 *                              6.16)
 *   HS_LOAD_ACQUIRE(p)         *p, before every load after it, as another
 *                              CPU stored them: x86-64's loads are
 *                              ordered (a plain load), arm64's a fetching
 *                              add of 0 (BPF has no load-acquire before
 *                              6.15; BPF atomics, 5.12)
 *   HS_THREAD_POINTER(t)       the thread pointer of task @t (a BTF or a
 *                              CO-RE-read task): x86-64's %fs base,
 *                              arm64's tpidr_el0, which glibc and musl
 *                              put at (x86-64) or just above (arm64) the
 *                              top of a thread's stack
 *   HS_LINK_REG(regs)          the link register of user registers
 *                              saved at a system call (a BTF pt_regs):
 *                              arm64's x30, where a leaf such as the C
 *                              library's clone3 keeps its return address;
 *                              x86-64 has none (0: the return address is
 *                              on the stack)
 */
#ifndef HEAPSNOOP_BPF_ARCH_H
#define HEAPSNOOP_BPF_ARCH_H

#include "heapsnoop/arch.h"

#ifdef HS_ARCH_X86_64
static __always_inline void hs_copy_uregs(__u64 *regs, const struct pt_regs *ctx)
{
	regs[HS_UREG_IP] = ctx->ip;
	regs[HS_UREG_BP] = ctx->bp;
	regs[HS_UREG_BX] = ctx->bx;
	regs[HS_UREG_R12] = ctx->r12;
	regs[HS_UREG_R13] = ctx->r13;
	regs[HS_UREG_R14] = ctx->r14;
	regs[HS_UREG_R15] = ctx->r15;
}

#define HS_STORE_RELEASE(p, v) do { barrier(); WRITE_ONCE(*(p), (v)); } while (0)
#define HS_LOAD_ACQUIRE(p) ({ typeof(*(p)) v_ = READ_ONCE(*(p)); barrier(); v_; })

#define HS_THREAD_POINTER(t, btf) ((btf) ? (t)->thread.fsbase : BPF_CORE_READ(t, thread.fsbase))

#define HS_LINK_REG(regs) 0ULL
#endif

#ifdef HS_ARCH_ARM64
/* pt_regs begins with user_pt_regs: regs[31], sp, pc, pstate. */
static __always_inline void hs_copy_uregs(__u64 *regs, const struct pt_regs *ctx)
{
	const struct user_pt_regs *u = (const void *)ctx;

	regs[HS_UREG_IP] = u->pc;
	regs[HS_UREG_FP] = u->regs[29];
	for (int i = 0; i < 10; i++)
		regs[HS_UREG_X19 + i] = u->regs[19 + i];
}

#define HS_STORE_RELEASE(p, v) __sync_lock_test_and_set((p), (v))
#define HS_LOAD_ACQUIRE(p) __sync_fetch_and_add((p), 0)

#define HS_THREAD_POINTER(t, btf) \
	((btf) ? (t)->thread.uw.tp_value : BPF_CORE_READ(t, thread.uw.tp_value))

#define HS_LINK_REG(regs) (((const struct user_pt_regs *)(regs))->regs[30])
#endif

#endif /* HEAPSNOOP_BPF_ARCH_H */

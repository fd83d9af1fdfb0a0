/* SPDX-License-Identifier: MIT */
/*
 * framestep.h - one step of the collector's walk (localstack.c) from a
 * frame to its caller, on the live stack: by the frame's rule (ehframe.h),
 * through a signal frame by the ucontext the kernel saved, or by the frame
 * pointer where x86-64 code has no CFI. Each checks what it loads; none
 * allocates or locks. Why and how: docs/COLLECTOR.md ("Unwinding in the
 * process").
 */
#ifndef HEAPSNOOP_COLLECTOR_FRAMESTEP_H
#define HEAPSNOOP_COLLECTOR_FRAMESTEP_H

#include <stdbool.h>
#include <stdint.h>

#include "ehframe.h"
#include "heapsnoop/arch.h"

/*
 * A return address's address bits (arm64: its PAC signature off): the
 * CPU's (user/common/pacmask.h), set by localstack__init().
 */
extern uint64_t localstack_ra_mask;
/* ... where it is not every bit: x86-64's a constant, no load. */
#if defined(__aarch64__)
#define LS_RA_MASK localstack_ra_mask
#else
#define LS_RA_MASK HS_RA_MASK
#endif

/* One frame's registers: those the rules read. */
struct frame {
	uintptr_t pc, sp, fp, lr;
	bool fp_ok, lr_ok;
	bool exact;	/* pc is where the frame is, not a return address */
	bool by_fp;	/* reached by a frame-pointer step (the walk's) */
};

enum step {
	STEP_OK,
	STEP_END,	/* the outermost frame */
	STEP_FAIL,	/* no sure way to the caller */
	STEP_NONE,	/* the walk's: the pc in no module, not recorded */
	STEP_AGAIN,	/* the walk's: modules unloaded unseen, walk again */
};

/*
 * One step by @r, a rule of @f's pc that is neither LS_RULE_BAD nor
 * LS_RULE_NOFDE: @f becomes its caller. The CFA and the loads it reads
 * are checked (above the stack pointer, 8-aligned; a caller above its
 * callee but across a signal); loads at CFI's addresses are trusted, as
 * libgcc's and libunwind's are. STEP_END where the return address is
 * undefined or 0.
 */
enum step framestep__rule(const struct ls_rule *r, struct frame *f);

/*
 * Through a signal frame at @f (LS_RULE_SIGRETURN): the interrupted
 * frame's pc, sp, fp (and aarch64's x30) from the ucontext, read through
 * process_vm_readv; its pc exact.
 */
enum step framestep__sigreturn(struct frame *f);

/*
 * One step by the frame pointer (x86-64: push %rbp; mov %rsp, %rbp;
 * arm64: stp x29, x30, [sp, #-N]!; mov x29, sp) where @f's pc has no
 * CFI: the frame pointer 8-aligned and above the stack pointer, its two
 * words read through process_vm_readv (a frame pointer that was not one
 * faults nothing). The caller's sp is taken as fp + 16, exact on x86-64;
 * on arm64 a lower bound, so the walk goes on from there only by a CFA
 * from x29 or by another record (localstack.c).
 */
enum step framestep__fp(struct frame *f);

/*
 * Is the code at @pc a signal return trampoline without CFI: the arm64
 * vDSO's __kernel_rt_sigreturn (mov x8, #139; svc #0), or x86-64's
 * (mov $15, %rax; syscall)? Read through process_vm_readv.
 */
bool framestep__is_sigreturn(uintptr_t pc);

#endif /* HEAPSNOOP_COLLECTOR_FRAMESTEP_H */

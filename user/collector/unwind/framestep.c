// SPDX-License-Identifier: MIT
/*
 * framestep.c - one step of the collector's walk from a frame to its
 * caller (see framestep.h). By a rule: the CFA from the stack or frame
 * pointer (or loaded from there: a realigned stack, glibc's x86-64
 * __restore_rt), the return address and the frame pointer at or equal to
 * a base + offset, as the tracer's step (user/unwind/unwind.c).
 * Through
 * a signal frame: the kernel's rt_sigframe layout (arch/x86/kernel/
 * signal_64.c, arch/arm64/kernel/signal.c: the ucontext at the stack
 * pointer on x86-64, after the siginfo on arm64). By the frame pointer:
 * the x86-64 psABI's frame record (the saved %rbp, the return address
 * above it) with the tracer's checks.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <unistd.h>

#include "framestep.h"
#include "heapsnoop/arch.h"

/* @n bytes at @addr of this process into @out, faulting nothing: 0 or -EFAULT. */
static int safe_read(uintptr_t addr, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

bool framestep__is_sigreturn(uintptr_t pc)
{
#if defined(__aarch64__)
	uint32_t insn[2];

	return !safe_read(pc, insn, sizeof(insn)) && insn[0] == 0xd2801168 &&
	       insn[1] == 0xd4000001;
#else
	static const uint8_t seq[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	uint8_t insn[9];

	return !safe_read(pc, insn, sizeof(insn)) && !memcmp(insn, seq, sizeof(seq));
#endif
}

/* A value as a rule's location gives it: *(base + off) or base + off. */
static bool loc_value(uint8_t loc, int32_t off, uintptr_t cfa, const struct frame *f,
		      uintptr_t *out)
{
	uintptr_t base;

	switch (LS_LOC_BASE(loc)) {
	case LS_BASE_CFA: base = cfa; break;
	case LS_BASE_SP: base = f->sp; break;
	default:
		if (!f->fp_ok)
			return false;
		base = f->fp;
		break;
	}
	base += (intptr_t)off;
	if (LS_LOC_HOW(loc) == LS_VAL) {
		*out = base;
		return true;
	}
	/* Saved on the stack, above this frame's stack pointer: CFI is trusted. */
	if (base < f->sp || (base & 7))
		return false;
	*out = *(const uintptr_t *)base;
	return true;
}

enum step framestep__rule(const struct ls_rule *r, struct frame *f)
{
	uintptr_t cfa, ra, fp = 0, base;
	bool fp_ok = false;

	if (r->cfa_base == LS_BASE_FP && !f->fp_ok)
		return STEP_FAIL;
	base = (r->cfa_base == LS_BASE_FP ? f->fp : f->sp) + (intptr_t)r->cfa_off;
	if (r->flags & LS_RULE_CFA_DEREF) {
		if (base < f->sp || (base & 7))
			return STEP_FAIL;
		base = *(const uintptr_t *)base;
	}
	cfa = base;
	switch (LS_LOC_HOW(r->ra)) {
	case LS_UNDEF:
		return STEP_END;
	case LS_SAME:
		/* aarch64: a leaf (or a frame a signal interrupted) returns to x30. */
		if (!f->lr_ok)
			return STEP_FAIL;
		ra = f->lr;
		break;
	default:
		if (!loc_value(r->ra, r->ra_off, cfa, f, &ra))
			return STEP_FAIL;
	}
	switch (LS_LOC_HOW(r->fp)) {
	case LS_SAME:
		fp = f->fp;
		fp_ok = f->fp_ok;
		break;
	case LS_AT:
	case LS_VAL:
		fp_ok = loc_value(r->fp, r->fp_off, cfa, f, &fp);
		break;
	}
	/* A caller's frame is above its callee's, but across a signal (sigaltstack). */
	if (cfa <= f->sp && !(r->flags & LS_RULE_SIGNAL))
		return STEP_FAIL;
	f->pc = ra & LS_RA_MASK;
	f->lr = f->pc;
	f->lr_ok = true;
	f->sp = cfa;
	f->fp = fp;
	f->fp_ok = fp_ok;
	f->exact = r->flags & LS_RULE_SIGNAL;
	return f->pc ? STEP_OK : STEP_END;
}

enum step framestep__sigreturn(struct frame *f)
{
	ucontext_t uc;
#if defined(__aarch64__)
	/* sp: the rt_sigframe, a siginfo then the ucontext; up to pc. */
	uintptr_t at = f->sp + sizeof(siginfo_t);
	size_t len = offsetof(ucontext_t, uc_mcontext.pstate);
#else
	/* sp: the ucontext (the frame's return address was popped by ret). */
	uintptr_t at = f->sp;
	size_t len = offsetof(ucontext_t, uc_mcontext.fpregs);
#endif

	if (safe_read(at, &uc, len))
		return STEP_FAIL;
#if defined(__aarch64__)
	f->pc = uc.uc_mcontext.pc & LS_RA_MASK;
	f->sp = uc.uc_mcontext.sp;
	f->fp = uc.uc_mcontext.regs[29];
	f->lr = uc.uc_mcontext.regs[30] & LS_RA_MASK;
#else
	f->pc = (uintptr_t)uc.uc_mcontext.gregs[REG_RIP];
	f->sp = (uintptr_t)uc.uc_mcontext.gregs[REG_RSP];
	f->fp = (uintptr_t)uc.uc_mcontext.gregs[REG_RBP];
	f->lr = 0;
#endif
	f->fp_ok = true;
	f->lr_ok = f->lr != 0;
	f->exact = true;
	return f->pc ? STEP_OK : STEP_END;
}

enum step framestep__fp(struct frame *f)
{
	uintptr_t rec[2];

	if (!f->fp_ok || !f->fp || (f->fp & 7) || f->fp < f->sp || safe_read(f->fp, rec, sizeof(rec)))
		return STEP_FAIL;
	rec[1] &= LS_RA_MASK;
	if (!rec[1])
		return STEP_END;
	f->pc = rec[1];
	/*
	 * The caller's sp: just above the record on x86-64 (push %rbp after
	 * the call); on arm64 at least that (stp x29, x30, [sp, #-N]! puts
	 * the record at the frame's bottom), as the tracer takes it
	 * (ARCH_FP_RECORD_SP): exact where the caller's CFA is from x29 or
	 * where its frame is no bigger than the record.
	 */
	f->sp = f->fp + 16;
	f->fp = rec[0];
	f->lr = rec[1];
	f->lr_ok = true;
	f->exact = false;
	return STEP_OK;
}

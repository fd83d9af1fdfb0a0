/* SPDX-License-Identifier: MIT */
/*
 * unwind/cfiregs.h - the unwinder's registers, by architecture (chosen at
 * build time by the compiler's __x86_64__ or __aarch64__, through
 * heapsnoop/arch.h): the DWARF numbers of the registers it follows, the
 * ones a compact CFI rule describes, and the record's registers (enum
 * hs_ureg) in DWARF numbering. Both heapsnoop's online unwinding and
 * heapdecode's offline one (docs/DESIGN.md, "Unwinding later,
 * elsewhere") read them; the tracer's arch/tracer_arch.h includes this.
 *
 *   DWARF register numbers   CFI_REG_SP, CFI_REG_FP and CFI_REG_RA (the
 *                            return-address column), CFI_NREGS of them
 *                            followed (cfi.c, unwind.c)
 *   cfi_rule_regs[]          the registers a compact CFI rule describes,
 *                            the return address first (cfiregs_$(ARCH).c)
 *   arch_ureg_dwarf[]        enum hs_ureg (heapsnoop/arch.h) -> DWARF number
 *   ARCH_FP_RECORD_SP        a frame record's address -> the caller's stack
 *                            pointer, where a frame has no CFI (unwind.c)
 */
#ifndef HEAPSNOOP_CFIREGS_H
#define HEAPSNOOP_CFIREGS_H

#include "heapsnoop/arch.h"

#ifdef HS_ARCH_X86_64
/* DWARF x86-64 register numbers the unwinder follows. */
enum {
	CFI_REG_FP = 6,		/* %rbp */
	CFI_REG_SP = 7,		/* %rsp */
	CFI_REG_RA = 16,	/* the return address column */
	CFI_NREGS = 17,
};
/* Registers a rule describes: RA, %rbp, %rbx, %r12..%r15. */
#define CFI_RULE_REGS 7
/* push %rbp; mov %rsp,%rbp: the caller's %rsp is above the saved %rbp and RA. */
#define ARCH_FP_RECORD_SP(fp) ((fp) + 16)
#endif

#ifdef HS_ARCH_ARM64
/* DWARF AArch64 register numbers: x0..x30 are 0..30, sp 31. */
enum {
	CFI_REG_FP = 29,	/* x29 */
	CFI_REG_RA = 30,	/* x30, the link register: the return address column */
	CFI_REG_SP = 31,
	CFI_NREGS = 32,
};
/* Registers a rule describes: RA (x30), x29, x19..x28. */
#define CFI_RULE_REGS 12
/*
 * A frame record {x29, x30} is at the bottom of its frame (GCC's and
 * clang's stp x29, x30, [sp, #-N]!; mov x29, sp): the caller's sp is the
 * record + N, and N is not in the record. + 16 is exact for a frame that is
 * the record alone, and a lower bound otherwise (docs/ARCH.md).
 */
#define ARCH_FP_RECORD_SP(fp) ((fp) + 16)
#endif

extern const int cfi_rule_regs[CFI_RULE_REGS];
extern const int arch_ureg_dwarf[HS_UREG__MAX];

#endif /* HEAPSNOOP_CFIREGS_H */

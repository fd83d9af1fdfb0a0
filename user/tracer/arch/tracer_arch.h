/* SPDX-License-Identifier: MIT */
/*
 * arch/tracer_arch.h - the tracer's architecture-specific parts behind one
 * interface, chosen at build time (the Makefile's ARCH picks
 * user/tracer/arch/ *_$(ARCH).c; the compiler's __x86_64__ or __aarch64__
 * picks the constants here). docs/ARCH.md lists them all.
 *
 *   DWARF register numbers,  the unwinder's, which heapdecode's offline
 *   cfi_rule_regs[],         unwinding shares: user/unwind/cfiregs.h,
 *   arch_ureg_dwarf[],       included here
 *   ARCH_FP_RECORD_SP
 *   ARCH_ELF_MACHINE         the ELF e_machine of the programs traced
 *   probesite__find()        probesite.h, in probesite_$(ARCH).c
 */
#ifndef HEAPSNOOP_TRACER_ARCH_H
#define HEAPSNOOP_TRACER_ARCH_H

#include <elf.h>

#include "heapsnoop/arch.h"
#include "unwind/cfiregs.h"

#ifdef HS_ARCH_X86_64
#define ARCH_ELF_MACHINE EM_X86_64
#endif

#ifdef HS_ARCH_ARM64
#define ARCH_ELF_MACHINE EM_AARCH64
#endif

#endif /* HEAPSNOOP_TRACER_ARCH_H */

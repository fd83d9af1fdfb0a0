/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * arch.h - what differs by architecture in what crosses the ring buffer
 * (event.h), chosen when the BPF object (clang -D__TARGET_ARCH_x86 or
 * _arm64) or a program (the compiler's __x86_64__ or __aarch64__) is
 * built. docs/ARCH.md lists every place an architecture shows.
 *
 *   enum hs_ureg          the registers an allocation's record carries for
 *                         --unwind dwarf: the call site, the stack pointer
 *                         and the callee-saved registers that CFI may
 *                         compute a caller's CFA or registers from
 *   HS_RET_SP_ADJ         bytes between the stack pointer at an allocator's
 *                         entry and after its return (x86-64: the return
 *                         address the call pushed; arm64: none, it is in x30)
 *   HS_USER_ADDR_END      above every user address: a frame there is junk
 *   HS_RA_MASK            the address bits of a return address read from
 *                         a stack (arm64: pointer-authentication bits off)
 *   HS_RA_IS_USER(ra)     whether a value read as a return address can be
 *                         one (signed or not), before HS_RA_MASK
 *   HS_PAGE_SIZE          the stack copy's last resort reads by pages
 */
#ifndef HEAPSNOOP_ARCH_H
#define HEAPSNOOP_ARCH_H

#if defined(__TARGET_ARCH_arm64) || (!defined(__TARGET_ARCH_x86) && defined(__aarch64__))
#define HS_ARCH_ARM64 1
#elif defined(__TARGET_ARCH_x86) || defined(__x86_64__)
#define HS_ARCH_X86_64 1
#else
#error "heapsnoop: an architecture it knows: x86-64 or arm64 (docs/ARCH.md)"
#endif

#ifdef HS_ARCH_X86_64
#define HS_ARCH_NAME "x86-64"
/* Numbered in the order of the DWARF x86-64 register numbers they map to. */
enum hs_ureg {
	HS_UREG_IP,	/* the call site: return address into the caller */
	HS_UREG_SP,
	HS_UREG_BP,
	HS_UREG_BX,
	HS_UREG_R12,
	HS_UREG_R13,
	HS_UREG_R14,
	HS_UREG_R15,
	HS_UREG__MAX,
};
#define HS_RET_SP_ADJ 8ULL
/* 5-level paging: user addresses below 2^56. */
#define HS_USER_ADDR_END (1ULL << 56)
#define HS_RA_MASK (~0ULL)
#define HS_RA_IS_USER(ra) ((ra) < HS_USER_ADDR_END)
#endif

#ifdef HS_ARCH_ARM64
#define HS_ARCH_NAME "arm64"
/*
 * x19..x28 are the callee-saved registers of AAPCS64 (and every one
 * Debian's arm64 glibc's CFI saves or computes from), x29 the frame
 * pointer. x30 (the link register) is not copied: at a uretprobe it holds
 * the kernel's trampoline, and a caller that called the allocator has
 * saved its own; the call site (the pc) stands in its DWARF column.
 */
enum hs_ureg {
	HS_UREG_IP,	/* pc: the call site, return address into the caller */
	HS_UREG_SP,
	HS_UREG_FP,	/* x29 */
	HS_UREG_X19,
	HS_UREG_X20,
	HS_UREG_X21,
	HS_UREG_X22,
	HS_UREG_X23,
	HS_UREG_X24,
	HS_UREG_X25,
	HS_UREG_X26,
	HS_UREG_X27,
	HS_UREG_X28,
	HS_UREG__MAX,
};
#define HS_UREG_BP HS_UREG_FP
#define HS_RET_SP_ADJ 0ULL
/*
 * 48-bit user addresses (4 KiB pages, 4 levels; Debian's kernels; 52-bit
 * user addresses are only handed out to a process that asks for them).
 * A return address signed by PAC (-mbranch-protection) keeps its signature
 * in the bits above: masked off, it is the address.
 */
#define HS_USER_ADDR_END (1ULL << 48)
#define HS_RA_MASK ((1ULL << 48) - 1)
/* Signing keeps bit 55, which selects the user half: 0. */
#define HS_RA_IS_USER(ra) (!((ra) & (1ULL << 55)))
#endif

/* The page size of the stack copy's last resort (4 KiB on both). */
#define HS_PAGE_SIZE 4096ULL

#endif /* HEAPSNOOP_ARCH_H */

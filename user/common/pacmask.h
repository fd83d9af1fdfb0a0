/* SPDX-License-Identifier: MIT */
/*
 * pacmask.h - the bits of a return address that are its address, on this
 * machine: arm64's pointer authentication (-mbranch-protection) signs a
 * saved return address in the bits above the kernel's virtual address
 * size, which is 48 or 52 by the kernel's build (the kernel's
 * ptrauth_user_pac_mask(): GENMASK(54, vabits_actual), the value
 * PTRACE_GETREGSET's NT_ARM_PAC_MASK reports). The mask is one for every
 * process of the machine, so heapsnoop and the collector ask their own
 * CPU: XPACLRI (a hint, a no-op without pointer authentication) strips a
 * signature from x30 as the hardware defines it, and stripping a pointer
 * with every bit below bit 55 set leaves exactly the address bits. Where
 * the CPU has no pointer authentication (AT_HWCAP without HWCAP_PACA)
 * nothing is signed and the mask is the fixed HS_RA_MASK (48 bits,
 * include/heapsnoop/arch.h), as before; x86-64: every bit. Header-only:
 * the collector and the tracer each call it once at their start.
 */
#ifndef HEAPSNOOP_PACMASK_H
#define HEAPSNOOP_PACMASK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/auxv.h>

#include "heapsnoop/arch.h"

#if defined(__aarch64__) && !defined(HWCAP_PACA)
#define HWCAP_PACA (1UL << 30)
#endif

/*
 * The mask of a return address's address bits (see above); *@from, if
 * not NULL, says where it came from: "the CPU", "no pointer
 * authentication: the fixed 48 bits", or "x86-64".
 */
static inline uint64_t pacmask__detect(const char **from)
{
#if defined(__aarch64__)
	uint64_t lr = (1ULL << 55) - 1;

	if (!(getauxval(AT_HWCAP) & HWCAP_PACA)) {
		if (from)
			*from = "no pointer authentication: the fixed 48 bits";
		return HS_RA_MASK;
	}
	/* In x30 and out, in one statement: a call between would change x30. */
	__asm__ volatile("mov x30, %0\n\thint #7\n\tmov %0, x30" : "+r"(lr) : : "x30"); /* xpaclri */
	/* 2^N - 1, N from 39 (3-level 4 KiB pages) to 52: anything else is not trusted. */
	if ((lr & (lr + 1)) || lr < (1ULL << 39) - 1 || lr > (1ULL << 52) - 1) {
		if (from)
			*from = "the fixed 48 bits (the CPU's answer was not an address mask)";
		return HS_RA_MASK;
	}
	if (from)
		*from = "the CPU (xpaclri)";
	return lr;
#else
	if (from)
		*from = "x86-64";
	return HS_RA_MASK;
#endif
}

#endif /* HEAPSNOOP_PACMASK_H */

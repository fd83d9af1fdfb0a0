/* SPDX-License-Identifier: MIT */
/*
 * probesite.h - choose where in a function to put its uprobe (and
 * uretprobe) so that the kernel emulates the probed instruction instead of
 * single-stepping it out of line (x86-64: ~0.4 us against ~14 us a hit).
 * One implementation per architecture: arch/probesite_x86.c,
 * arch/probesite_arm64.c (the Makefile's ARCH picks it).
 *
 * x86-64: the site is the first instruction the kernel emulates (push reg,
 * nop, jmp/jcc/call rel) such that every instruction before it leaves %rsp
 * and the argument registers the probe reads unchanged, and transfers
 * control nowhere, except a `test %reg,%reg; je/jz` on the argument that
 * may be NULL (free(NULL) needs no tracing). With %rsp unchanged, a
 * uretprobe at the site still finds the return address at (%rsp).
 * arm64: the first instruction the kernel simulates (branches but bl/blr,
 * adr/adrp, ldr literal), with sp, x30 (the return address, which the
 * uretprobe takes) and the arguments read untouched before it.
 * Otherwise: the entry.
 */
#ifndef HEAPSNOOP_PROBESITE_H
#define HEAPSNOOP_PROBESITE_H

#include <stddef.h>
#include <stdint.h>

/* Argument registers of the ABI, as bits of @args_read. */
#define PS_ARG(i) (1u << (i))	/* x86-64: 0 rdi, 1 rsi, 2 rdx, ...; arm64: x0, x1, ... */

struct probesite {
	uint32_t offset;	/* bytes from the function's first byte */
	int emulated;		/* 1 if the instruction at offset is emulated */
	char insn[192];		/* "push %rbp" at the site, for -v */
	char why[384];		/* why this site, for -v */
};

/*
 * probesite__find - analyse @len bytes of code at virtual address @addr.
 * @args_read: PS_ARG() bits the probe reads; @null_arg: index of the
 * argument whose NULL test may skip the site, or -1.
 * Returns 0 (a site, maybe the entry, is in @ps) or -EINVAL if capstone
 * cannot be opened. Never fails for undecodable code: that is the entry.
 */
int probesite__find(const uint8_t *code, size_t len, uint64_t addr,
		   unsigned int args_read, int null_arg, struct probesite *ps);

#endif /* HEAPSNOOP_PROBESITE_H */

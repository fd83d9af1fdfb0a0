/* SPDX-License-Identifier: MIT */
/*
 * ehframe.h - the unwind rule of one code address, read in the process
 * from its module's .eh_frame as the dynamic loader mapped it: the FDE
 * found through .eh_frame_hdr's binary search table (or a walk of
 * .eh_frame where the header has no table), or through an index of
 * .eh_frame or .debug_frame that modcfi.c built for a module without a
 * header or code without .eh_frame; its CIE's and its own call frame
 * instructions run up to the address (DWARF 5, section 6.4; the
 * .eh_frame encodings of the LSB, "Exception Frames"), the row compiled
 * to a struct ls_rule. Nothing allocated, no lock, no libc call: callable
 * inside malloc and from a signal handler.
 *
 * A rule is the tracer's idea of one (user/unwind/cfi.h,
 * struct cfi_rule):
 * CFA = register + offset, and how the caller's return address and frame
 * pointer are found from it; in the process only those two registers and
 * the stack pointer are followed (the walk wants return addresses, and the
 * CFA of a frame is computed from the stack or frame pointer only), and a
 * row written as DWARF expressions is compiled to the same form wherever
 * its value is [*](sp | fp | CFA + constant) at that address: glibc's
 * x86-64 signal trampoline (__restore_rt), the x86-64 PLT's CFA (an
 * expression of the pc, constant at one pc), a stack realigned through
 * %rbp (CFA = *(rbp - 8)). Any other expression, a CFA from another
 * register, or a return address from anywhere else makes the rule
 * LS_RULE_BAD: the walk stops there, marked unreadable.
 */
#ifndef HEAPSNOOP_COLLECTOR_EHFRAME_H
#define HEAPSNOOP_COLLECTOR_EHFRAME_H

#include <stdbool.h>
#include <stdint.h>

/* DWARF register numbers of the registers followed (psABIs). */
#if defined(__x86_64__)
#define LS_DW_FP 6	/* %rbp */
#define LS_DW_SP 7	/* %rsp */
#define LS_DW_PC 16	/* the return address column, %rip */
#elif defined(__aarch64__)
#define LS_DW_FP 29	/* x29 */
#define LS_DW_LR 30	/* x30, the link register: the return address column */
#define LS_DW_SP 31
#else
#error "the collector's unwinder knows x86-64 and aarch64 (docs/COLLECTOR.md)"
#endif

/* Where a value is taken from: the CFA, the callee's sp or fp. */
enum ls_base {
	LS_BASE_CFA,
	LS_BASE_SP,
	LS_BASE_FP,
};

/* How the caller's value of a register is found (the tracer's enum cfi_kind). */
enum ls_how {
	LS_UNDEF,	/* not recoverable; for the return address: the outermost frame */
	LS_SAME,	/* unchanged by this frame */
	LS_AT,		/* saved at base + off */
	LS_VAL,		/* is base + off */
};

/* ls_rule.flags */
#define LS_RULE_BAD	(1u << 0)	/* a form not handled: the walk stops, unreadable */
#define LS_RULE_NOFDE	(1u << 1)	/* in a module, no FDE covers it */
#define LS_RULE_SIGNAL	(1u << 2)	/* a signal frame (augmentation "S"): the caller's pc is exact */
#define LS_RULE_LOADER	(1u << 3)	/* in the dynamic loader (its entry has no CFI) */
#define LS_RULE_SIGRETURN (1u << 4)	/* aarch64: the kernel's rt_sigreturn trampoline */
#define LS_RULE_CFA_DEREF (1u << 5)	/* CFA = *(base + cfa_off) */
/*
 * Nearly every row: CFA = sp or fp + off, the return address at CFA + off,
 * the frame pointer unchanged or at CFA + off; no other flag. The walk's
 * fast path.
 */
#define LS_RULE_PLAIN	(1u << 6)

/*
 * The rule of one address, 16 bytes (two words in the walk's cache):
 * CFA = [*](cfa_base + cfa_off), cfa_base LS_BASE_SP or LS_BASE_FP; the
 * return address and the frame pointer each by how/base/off.
 */
struct ls_rule {
	int32_t cfa_off;
	int32_t ra_off;
	int32_t fp_off;
	uint8_t cfa_base;
	uint8_t ra;		/* how | base << 4 */
	uint8_t fp;		/* how | base << 4 */
	uint8_t flags;
};

#define LS_LOC(how, base) ((uint8_t)((how) | (base) << 4))
#define LS_LOC_HOW(loc) ((loc) & 15)
#define LS_LOC_BASE(loc) ((loc) >> 4)

/* One FDE of an index (modcfi.c): its first address in the process, its offset. */
struct ls_fde {
	uintptr_t start;
	uint64_t off;
};

/*
 * A module's CFI found without .eh_frame_hdr (modcfi.h): @sec..@sec +
 * @len a section's bytes, .eh_frame as loaded or .debug_frame mapped from
 * the file (@debug: its CIE ids and CIE pointers, DWARF 5 section 6.4.1,
 * and addresses as linked, plus @bias, the module's load address); @fde
 * its @n FDEs sorted by start.
 */
struct ls_index {
	const uint8_t *sec;
	uint64_t len;
	uintptr_t bias;
	bool debug;
	const struct ls_fde *fde;
	uint64_t n;
};

/*
 * A module as the dynamic loader mapped it: @hdr its .eh_frame_hdr (NULL:
 * none), @lo..@hi the bounds of the segment holding it (every read of the
 * CFI checked against them: .eh_frame lies in the same read-only segment).
 * Or, @idx set (@hdr then unused): an index of a section's FDEs, every
 * read bounded by that section.
 */
struct ls_module {
	const uint8_t *hdr;
	uintptr_t lo, hi;
	const struct ls_index *idx;
};

/*
 * The rule for the code at @addr of @mod: @addr the pc itself for the
 * first frame or one after a signal frame, else the return address minus
 * one (the call it returns from, which may be a function's last
 * instruction). @pc is the register's value at that frame (for an
 * expression that reads it, as the PLT's does). Returns 0 with *@r
 * filled (flags LS_RULE_BAD for a row not handled), or -ENOENT when no
 * FDE covers @addr, -EINVAL for CFI that is malformed or out of bounds.
 */
int ehframe__rule(const struct ls_module *mod, uintptr_t addr, uintptr_t pc,
		  struct ls_rule *r);

/*
 * The FDEs of the section @sec..@sec + @len (.eh_frame as loaded, or
 * .debug_frame with @debug, its addresses plus @bias) into @out[@max],
 * unsorted, CIEs and FDEs of an empty range skipped; @out NULL: counted
 * only. Returns the count found (those past @max not stored), or -EINVAL
 * for an entry that is malformed (the index is then not used: a walk that
 * stops beats a rule from the wrong FDE).
 */
int64_t ehframe__scan(const uint8_t *sec, uint64_t len, uintptr_t bias, bool debug,
		      struct ls_fde *out, uint64_t max);

#endif /* HEAPSNOOP_COLLECTOR_EHFRAME_H */

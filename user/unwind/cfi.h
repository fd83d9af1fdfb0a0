/* SPDX-License-Identifier: MIT */
/*
 * unwind/cfi.h - the call-frame information (CFI: .eh_frame, .debug_frame,
 * and a separate debug file's .debug_frame) of mapped modules, read by
 * elfutils' libdw (dwarf_getcfi_elf, dwarf_cfi_addrframe), as compact
 * unwinding rules for unwind.c.
 *
 * One table per module file, remembered by its identity (device, inode),
 * so libc's is read once however many processes map it. Where its file
 * comes from is the caller's (struct cfi_src): the tracer reaches a live
 * process's files through /proc (tracer/unwind/procsrc.c), heapdecode
 * finds a log's by path and build ID (decode/input/ustacks.c), its
 * mappings' identities made up. Rules found are
 * kept in a direct-mapped cache by (module, address): libdw parses an FDE
 * for every lookup, a hot call site is looked up once.
 *
 * Registers are the architecture's DWARF register numbers (arch/tracer_arch.h).
 */
#ifndef HEAPSNOOP_CFI_H
#define HEAPSNOOP_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mapset.h"
#include "unwind/cfiregs.h"

/* How the caller's value of a register is found. */
enum cfi_kind {
	CFI_SAME,	/* unchanged by this frame */
	CFI_UNDEF,	/* not recoverable; for the RA: this is the outermost frame */
	CFI_AT,		/* saved at CFA + off */
	CFI_VAL,	/* is CFA + off */
	CFI_EXPR,	/* a DWARF expression: cfi_module__eval_frame() */
};

/* Registers a rule describes: cfi_rule_regs[] (arch/tracer_arch.h), RA first. */

/*
 * One row of a module's CFI for one address: CFA = cfa_reg + cfa_off
 * (cfa_reg CFI_NREGS: an expression, see cfi_module__eval_frame()), and each
 * followed register's rule.
 */
struct cfi_rule {
	uint8_t cfa_reg;
	uint8_t kind[CFI_RULE_REGS];	/* enum cfi_kind */
	bool slow;			/* the CFA or a rule is an expression */
	int32_t cfa_off;
	int32_t off[CFI_RULE_REGS];
};

struct cfi_cache;
struct cfi_module;

struct cfi_stats {
	size_t modules;		/* module files opened */
	size_t no_cfi;		/* ... of which have no CFI (frame pointers) */
	size_t debug_files;	/* ... with a separate debug file's .debug_frame */
	size_t cfi_bytes;	/* bytes of .eh_frame, .eh_frame_hdr, .debug_frame */
	size_t cache_bytes;	/* the rule cache */
	uint64_t lookups, misses;	/* rule cache */
	uint64_t exprs;		/* rows whose CFA or registers are expressions */
	uint64_t trims;		/* cfi_cache__trim()s */
	size_t closed;		/* ... modules they closed */
};

/*
 * Where a mapping's file is: @open fills *@fd with the file @pid maps at
 * @m, opened read-only, and *@debug_fd with a separate debug file of it
 * (whose .debug_frame is read after the file's own CFI) or -1; both are
 * the module's from then on. Returns 0, or a negative errno (no file).
 */
struct cfi_src {
	int (*open)(void *ctx, pid_t pid, const struct mapping *m, int *fd, int *debug_fd);
	void *ctx;
};

/* A cache whose modules come from @src (copied; its ctx outlives the cache). */
struct cfi_cache *cfi_cache__new(const struct cfi_src *src);
void cfi_cache__free(struct cfi_cache *c);

/*
 * The CFI of the file @pid maps at @m (@m->ino not 0: its identity, with
 * @m->dev), opened on first use through the cache's source. Returns NULL
 * if there is no file or it cannot be read as ELF; a module without CFI
 * is returned (and counted), its lookups fail.
 */
struct cfi_module *cfi_cache__module(struct cfi_cache *c, pid_t pid, const struct mapping *m);

/*
 * The rule for code at file offset @off of module @mod (a process address
 * minus its mapping's start plus the mapping's file offset).
 * Returns 0; -ENOENT if no FDE covers it (or the module has no CFI).
 */
int cfi_cache__rule(struct cfi_cache *c, struct cfi_module *mod, uint64_t off,
		    struct cfi_rule *rule);

/*
 * Read memory for an expression: @addr, 8 bytes, into *@val; 0 or -EFAULT.
 */
typedef int (*cfi_read_fn)(void *ctx, uint64_t addr, uint64_t *val);

/*
 * The slow path, for a row with expressions (a stack realigned through
 * %rbp, a PLT stub's CFA): compute the caller's CFA and the register
 * rules from the full row, given the
 * callee's registers @regs (DWARF numbering; @known a bitmask of those
 * set). Returns 0 and fills *@cfa and @caller (registers recovered, with
 * *@caller_known); -ENOENT, -EFAULT (memory), -EINVAL (an operation not
 * supported).
 */
int cfi_module__eval_frame(struct cfi_module *mod, uint64_t off,
			   const uint64_t regs[CFI_NREGS], uint32_t known, cfi_read_fn rd,
			   void *ctx, uint64_t *cfa, uint64_t caller[CFI_NREGS],
			   uint32_t *caller_known);

void cfi_cache__stats(const struct cfi_cache *c, struct cfi_stats *st);

/*
 * Is a trim due (cfi.c's bounds: CFI_TRIM_MISSES rule-cache misses,
 * CFI_TRIM_MODULES modules opened, or CFI_TRIM_S seconds with a miss,
 * since the last)?
 */
bool cfi_cache__trim_due(const struct cfi_cache *c);

/*
 * Trim: close the modules not used since the last trim and begin the
 * others' CFI anew (libdw's FDEs freed). Every struct cfi_module pointer
 * handed out before is then stale: the caller forgets them. Returns 0 or
 * -ENOMEM (nothing trimmed).
 */
int cfi_cache__trim(struct cfi_cache *c);

#endif /* HEAPSNOOP_CFI_H */

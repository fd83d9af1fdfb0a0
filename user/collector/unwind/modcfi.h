/* SPDX-License-Identifier: MIT */
/*
 * modcfi.h - the CFI of a module that .eh_frame_hdr does not index, for
 * the collector's walk (localstack.c): a module linked without
 * .eh_frame_hdr (ld --no-eh-frame-hdr), whose .eh_frame is loaded but has
 * no search table, and code whose CFI is in .debug_frame alone (built
 * -fno-asynchronous-unwind-tables -g, or by an assembler told
 * `.cfi_sections .debug_frame`), which the loader does not map. As the
 * tracer finds both (user/unwind/cfi.c, by libdw's
 * dwarf_getcfi_elf and dwarf_getcfi), the collector must too.
 *
 * Per module, once: its file opened (the path the loader names, or
 * /proc/self/exe for the program), checked to be what is loaded (its
 * loadable segments' addresses and sizes), its section headers read for
 * .eh_frame and .debug_frame, .debug_frame mapped read-only from the file,
 * and an index of each section's FDEs built (ehframe__scan(), then sorted)
 * in memory from mmap. Nothing from the C library's allocator, no stdio.
 * Bounded: MODCFI_MODULES modules, MODCFI_FDES FDEs a section; what is
 * over is counted (modcfi__stats()) and said once on standard error, its
 * pcs have no rule (the walk stops there and marks the stack unreadable). Not read: a .debug_frame compressed (SHF_COMPRESSED,
 * counted), or in a separate debug file (.gnu_debuglink, build ID).
 * Why and how: docs/COLLECTOR.md ("Unwinding in the process").
 */
#ifndef HEAPSNOOP_COLLECTOR_MODCFI_H
#define HEAPSNOOP_COLLECTOR_MODCFI_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

#include "ehframe.h"

/* Modules with tables at most, and FDEs in one section's index (16 bytes each). */
#define MODCFI_MODULES 64
#define MODCFI_FDES (1u << 20)

struct modcfi_stats {
	uint64_t modules;	/* module files read for their sections */
	uint64_t eh_indexed;	/* ... .eh_frame without .eh_frame_hdr indexed */
	uint64_t debug_indexed;	/* ... .debug_frame mapped and indexed */
	uint64_t fdes;		/* FDEs in those indexes */
	uint64_t bytes;		/* the indexes' memory */
	uint64_t over;		/* lookups refused: MODCFI_MODULES full, or FDEs past MODCFI_FDES */
	uint64_t compressed;	/* .debug_frame sections compressed, not read */
	uint64_t bad;		/* files not the module loaded, or CFI malformed */
	uint64_t busy;		/* lookups while another was under way (a signal inside one) */
};

/*
 * The rule for the code at @addr (as ehframe__rule(): the pc, or a return
 * address minus one; @pc the register's value) of the module @info
 * describes, from the index of its .eh_frame where it has no
 * .eh_frame_hdr (@has_hdr false), else from its file's .debug_frame. To
 * be called from a dl_iterate_phdr callback: the tables are built and read
 * under the loader's lock, and under this file's own try-lock besides (no
 * thread waits: a second one in, a signal handler's or another C
 * library's, gets -EBUSY). errno is kept. Returns 0 with *@r filled;
 * -ENOENT: no FDE covers @addr in either; -EINVAL: malformed CFI, or the
 * file is not the module loaded; -EBUSY (the rule is not to be cached).
 */
int modcfi__rule(const struct dl_phdr_info *info, bool has_hdr, uintptr_t addr, uintptr_t pc,
		 struct ls_rule *r);

/* The counts so far (no lock: each a word, for tests and the stats). */
void modcfi__stats(struct modcfi_stats *st);

#endif /* HEAPSNOOP_COLLECTOR_MODCFI_H */

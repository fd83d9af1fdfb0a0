/* SPDX-License-Identifier: MIT */
/*
 * ustacks.h - a log's `ustack` records (heapsnoop --keep-stacks,
 * docs/OUTPUT.md "Stack bytes kept") unwound here, later and elsewhere:
 * the tracer's own unwinder (user/unwind/) over the registers and stack
 * bytes each record kept, the modules' files found by the dump's `map`
 * records: the path (under --sysroot), else the build ID under
 * --debug-dir, the sysroot's or this machine's /usr/lib/debug, with a
 * separate debug file's .debug_frame (.build-id/xx/rest.debug, or
 * debuginfod) read after the file's own CFI (symbolizer.h's
 * symbolizer__module_files()).
 *
 * A record comes just before its block's `live` record; that record's
 * online frames are replaced by the offline ones where those are no
 * worse: as many or more, or complete where the online ones were cut.
 * Where the offline walk ends sooner (a module's file not found here, a
 * log of another architecture) the online frames stay, and why is
 * counted. A log of the other architecture (arm64's on x86-64, or the
 * reverse) is unwound by that architecture's unwinder
 * (unwind/otherarch.h). docs/DESIGN.md, "Unwinding later, elsewhere".
 */
#ifndef HEAPDECODE_USTACKS_H
#define HEAPDECODE_USTACKS_H

#include <stdint.h>
#include <stdio.h>

#include "records.h"
#include "symbolizer.h"

struct hd_ustacks;

/* What became of the records (hd_ustacks__report()). */
struct hd_ustacks_stats {
	uint64_t records;	/* ustack records read */
	uint64_t applied;	/* ... met their live record */
	uint64_t same;		/* ... unwound to the online frames exactly */
	uint64_t further;	/* ... to more frames, or complete where online was cut */
	uint64_t differ;	/* ... to as many frames, other ones (the online kept no worse) */
	uint64_t kept_online;	/* ... ending sooner offline: the online frames kept */
	uint64_t bad;		/* malformed: data= not a coding of size=, a walk refused */
	uint64_t version;	/* of a version this heapdecode does not read */
	uint64_t other_arch;	/* of an architecture neither x86-64 nor arm64 */
	uint64_t foreign;	/* ... unwound by the other architecture's unwinder */
	uint64_t unmatched;	/* followed by no live record of their block */
	uint64_t modules, modules_missing;	/* module files looked for, not found */
	uint64_t debug_files;	/* ... found with a separate debug file's CFI */
};

/* A reader over @sym's files and rules (--sysroot, --debug-dir); NULL: no memory. */
struct hd_ustacks *hd_ustacks__new(struct symbolizer *sym);
void hd_ustacks__free(struct hd_ustacks *u);

/* A new dump: its mappings and any record not met forgotten. */
void hd_ustacks__reset(struct hd_ustacks *u);

/* A `map` record of the dump. Returns 0 or -ENOMEM. */
int hd_ustacks__map(struct hd_ustacks *u, const struct record *r);

/*
 * A `ustack` record: decoded and held for the `live` record that
 * follows. Returns 0, or -ENOMEM; a record that cannot be used is
 * counted (hd_ustacks_stats), not an error.
 */
int hd_ustacks__take(struct hd_ustacks *u, const struct record *r);

/*
 * The `live` record of process @pid's block at @ptr, its @*depth frames
 * (innermost first, @frames holds REC_MAX_DEPTH) and its stacks.h
 * STACK_* cut flags in *@flags: replaced by the held record's offline
 * frames when it is this block's and they are no worse (the frames after
 * the record's frames=, a thread's creator, kept after them).
 */
void hd_ustacks__apply(struct hd_ustacks *u, int pid, uint64_t ptr, uint64_t *frames,
		       uint32_t *depth, uint32_t *flags);

void hd_ustacks__stats(const struct hd_ustacks *u, struct hd_ustacks_stats *st);

/*
 * What the offline unwinding did, on @out (heapdecode's standard error):
 * nothing when no record was read; the modules whose files were not
 * found, each once, with why.
 */
void hd_ustacks__report(const struct hd_ustacks *u, FILE *out);

#endif /* HEAPDECODE_USTACKS_H */

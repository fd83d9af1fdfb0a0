/* SPDX-License-Identifier: MIT */
/*
 * frametab.h - the frames of a stack that are not native code, in both
 * programs (docs/OUTPUT.md, `frame` and `jit`):
 *
 *   interpreter frames  a Python or Lua function at a line, given a
 *                       synthetic address (records.h REC_FRAME_BASE +
 *                       an id, never a user-space address) that stands in
 *                       a stack's tokens where the interpreter's frame
 *                       is, interleaved with the native ones;
 *   JIT ranges          code in anonymous executable memory, named as a
 *                       perf map (/tmp/perf-PID.map) names it; its frames
 *                       keep their real addresses.
 *
 * The writers (the tracer's loader, the collector) intern frames and add
 * ranges as their walkers find them; at each dump they mark what the
 * stacks written use (frametab__need()) and write those `frame` and `jit`
 * records before the stacks (frametab__write()), so each dump names its
 * own frames, as its `map` records do. heapdecode takes the records back
 * (frametab__take()) and both name frames through them
 * (frametab__symbolize()).
 *
 * Keyed by process: a synthetic address means something only with its
 * pid. Ids are never reused while the table lives (a process that ends
 * or execs is forgotten, its ids with it), so a stack written in one
 * dump and an address named in a later one agree.
 */
#ifndef HEAPSNOOP_FRAMETAB_H
#define HEAPSNOOP_FRAMETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "records.h"
#include "symbolizer.h"

/*
 * The boundary between a thread's own frames and those of its creation
 * (the creating thread's stack in pthread_create or clone: the tracer's
 * track/creators.h): a synthetic frame of this kind and function, one per
 * process, the same for every thread, so that stacks of a pool's workers
 * merge. Reports write it as a "created by" line (framefmt.c).
 */
#define FRAMETAB_CREATOR_KIND	"thread"
#define FRAMETAB_CREATOR_FUNC	"[created by]"

/* Interpreter frames a table holds at most: then frametab__intern() refuses. */
#define FRAMETAB_MAX_FRAMES	(1u << 24)
/* JIT ranges a process holds at most: then frametab__add_jit() refuses. */
#define FRAMETAB_MAX_JIT	(1u << 22)

struct frametab;

/* An empty table; NULL: no memory. */
struct frametab *frametab__new(void);
void frametab__free(struct frametab *ft);

/*
 * The synthetic address of a frame of process @pid's interpreter @kind
 * (records.h's grammar: [a-z][a-z0-9_]*, at most REC_KIND_MAX; not
 * "jit") in @function (not NULL) of source file @file (NULL or "": none)
 * at line @line (0: unknown), into *@addr: the same for the same five,
 * a new one (the next id) otherwise. A function over REC_NAME_MAX bytes
 * or a file over REC_FILE_MAX is kept cut, "..." at its end (a UTF-8
 * character never split). Returns 0; -EINVAL for a bad kind; -ENOSPC
 * past FRAMETAB_MAX_FRAMES frames (the caller ends the stack there and
 * says cut=depth); -ENOMEM.
 */
int frametab__intern(struct frametab *ft, uint32_t pid, const char *kind, const char *function,
		     const char *file, uint32_t line, uint64_t *addr);

/*
 * From now on process @pid's interpreter frame at @old is named as the
 * one at @new is (its kind, function, file and line copied): for a writer
 * that learned a better name for what @old stood for (Lua's global
 * names, found by a walk after the frame was first named), so that the
 * records already holding @old say the new name too; each later dump
 * writes @old's `frame` record so. @old no longer stands for its old
 * texts: interning them again gives a new address. Returns 0 (also when
 * @old is @new); -ENOENT if either is not an interned frame of @pid;
 * -ENOMEM.
 */
int frametab__rename(struct frametab *ft, uint32_t pid, uint64_t old, uint64_t new);

/*
 * JIT code [@start, @end) of process @pid is @name (a perf map's line:
 * "START SIZE name"; cut as a function is). A later range that overlaps
 * earlier ones replaces them (the code there was freed and its memory
 * reused): pairwise in address order, the newer is kept. Returns 0;
 * -EINVAL for an empty range, one past REC_FRAME_BASE (no user space is
 * there) or a NULL name; -ENOSPC past
 * FRAMETAB_MAX_JIT ranges of the process; -ENOMEM.
 */
int frametab__add_jit(struct frametab *ft, uint32_t pid, uint64_t start, uint64_t end,
		      const char *name);

/*
 * The same for a part of a function's code: [@start, @end) is @name's
 * code from @code on (@code <= @start; func_off counts from there), at
 * source @file (NULL or "": none, cut at REC_FILE_MAX) line @line (0:
 * none), as a jitdump's debug info says. Returns as frametab__add_jit();
 * -EINVAL also for @code past @start.
 */
int frametab__add_jit_line(struct frametab *ft, uint32_t pid, uint64_t start, uint64_t end,
			   const char *name, const char *file, uint32_t line, uint64_t code);

/* Process @pid ended or exec'd: its frames and ranges forgotten. */
void frametab__forget(struct frametab *ft, uint32_t pid);

/*
 * A dump begins: nothing is needed yet. Then frametab__need() for each
 * stack the dump writes (its `live` and `stack` records), then
 * frametab__write() for each process, before its first `live` record.
 */
void frametab__dump_begin(struct frametab *ft);

/* Has @pid frames or ranges of its own (else frametab__need() has nothing to mark)? */
bool frametab__has(struct frametab *ft, uint32_t pid);

/*
 * The @depth @frames of a stack of @pid are written in this dump: mark the
 * frames and JIT ranges they name. Returns 0 or -ENOMEM.
 */
int frametab__need(struct frametab *ft, uint32_t pid, const uint64_t *frames, uint32_t depth);

/*
 * Write to @out the `frame` and `jit` records of @pid that this dump
 * needs, each once. Returns 0, or -EIO if @out failed.
 */
int frametab__write(struct frametab *ft, uint32_t pid, FILE *out);

/*
 * Take a parsed `frame` or `jit` record @r (heapdecode): what it names is
 * known from now on, a later record for the same address or range
 * replacing it. Returns 0 (1 for a record of another type, ignored);
 * -EINVAL for a kind "jit"; -ENOMEM.
 */
int frametab__take(struct frametab *ft, const struct record *r);

/*
 * Name @addr of @pid if it is not native code, into @f: a synthetic
 * address (its function, file:line, kind, module "[KIND]"; or
 * SYM_NO_FRAME without its record), or an address in a JIT range (its
 * name, the offset into its function's code, its file:line where the
 * range has one, kind and module "jit", "[jit]"). Strings are
 * printable (text.h text_printable()) and live until the table is freed.
 * Returns true if it named @addr, false for native code (@f untouched).
 */
bool frametab__symbolize(struct frametab *ft, uint32_t pid, uint64_t addr, struct sym_frame *f);

/* Does a record (or frametab__intern()) name synthetic address @addr of @pid? */
bool frametab__known(struct frametab *ft, uint32_t pid, uint64_t addr);

/* Synthetic addresses frametab__symbolize() found no record of, each once. */
size_t frametab__missing(const struct frametab *ft);

/* Bytes the table holds. */
size_t frametab__memory(const struct frametab *ft);

#endif /* HEAPSNOOP_FRAMETAB_H */

/* SPDX-License-Identifier: MIT */
/*
 * jitnames.h - the names of one process's frames in JIT code: each new
 * stack's frames in anonymous executable memory (mapset.h's MAPPING_ANON)
 * looked up while the process lives in the two files perf reads, its
 * perf map (perfmap.h, /tmp/perf-PID.map) and its jitdump (jitdump.h,
 * jit-PID.dump, found by its mapping: jitdumpfile.h), and the names that
 * named any of them kept, each once, for each dump to copy into the log
 * (`jit` records, docs/OUTPUT.md): heapdecode then names those frames
 * with nothing of the machine.
 *
 * The two files merged: an address is named by the newest definition of
 * a range over it, as each file alone does; between the files, newest is
 * the one read later (a read of both takes the perf map first, so the
 * jitdump wins a tie: it may give the line). A jitdump's code with debug
 * info is named piecewise: each piece of it one line covers, with that
 * file:line.
 */
#ifndef HEAPSNOOP_JITNAMES_H
#define HEAPSNOOP_JITNAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jitdump.h"
#include "mapset.h"
#include "perfmap.h"

/* A name of a range of JIT code, as a `jit` record carries it. */
struct jit_name {
	uint64_t start, end;	/* the range named */
	const char *name;	/* the function's (the perf map's line, the LOAD's) */
	const char *file;	/* the source file of the range's code, or NULL ... */
	uint32_t line;		/* ... and its line, 0: none (jitdump debug info) */
	uint64_t code;		/* the function's code starts here (<= start) */
};

struct jit_names_stats {
	uint64_t frames;	/* frames of new stacks in JIT code */
	uint64_t named;		/* ... named by the perf map or the jitdump */
	uint32_t used;		/* names that named any: copied into each dump */
	uint32_t pending;	/* addresses not named yet: looked up again at a dump */
	bool no_map;		/* frames in JIT code, and neither file found */
	bool dump_found;	/* the jitdump was found */
	struct perf_map_stats map;
	struct jit_dump_stats dump;
};

struct jit_names;

/* @pid's, nothing read yet; NULL: no memory. */
struct jit_names *jit_names__new(pid_t pid);
void jit_names__free(struct jit_names *j);

/*
 * A new stack of @n return addresses (@frames) in mappings @ms: each one
 * in anonymous memory is named by the newest definition read (both files
 * read as far as they have grown when none names it) and the name kept;
 * @kept (NULL: none) is called with each name kept for the first time
 * (the caller's frame table: the jit records a dump writes). An address
 * neither file names yet is kept for jit_names__retry(). Returns how
 * many frames were in anonymous memory, or -ENOMEM (also when @kept
 * fails).
 */
int jit_names__note(struct jit_names *j, const struct mapset *ms, const uint64_t *frames,
		    uint32_t n, int (*kept)(const struct jit_name *e, void *ctx), void *ctx);

/*
 * A dump is written: the addresses no file named yet looked up again,
 * both files read as far as they have grown (a jitdump's writer appends
 * through a buffer: V8's holds 2 MiB, written out when full and at the
 * process's exit). Returns how many frames that named, or -ENOMEM.
 */
int jit_names__retry(struct jit_names *j, int (*kept)(const struct jit_name *e, void *ctx),
		     void *ctx);

/*
 * The range naming return address @addr, among what was read, into @e
 * (its start, end, name; id: its number in its file); no file is read.
 * Returns 0 or -ENOENT.
 */
int jit_names__find(struct jit_names *j, uint64_t addr, struct perf_map_entry *e);

void jit_names__stats(const struct jit_names *j, struct jit_names_stats *st);

#endif /* HEAPSNOOP_JITNAMES_H */

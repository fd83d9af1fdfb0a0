/* SPDX-License-Identifier: MIT */
/*
 * jitnames.h - the names of one process's frames in JIT code: each new
 * stack's frames in anonymous executable memory (mapset.h's MAPPING_ANON)
 * looked up in the process's perf map (perfmap.h) while it lives, and the
 * lines that named any of them kept, for each dump to copy into the log
 * (`jit` records, docs/OUTPUT.md): heapdecode then names those frames
 * with nothing of the machine.
 */
#ifndef HEAPSNOOP_JITNAMES_H
#define HEAPSNOOP_JITNAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mapset.h"
#include "perfmap.h"

struct jit_names_stats {
	uint64_t frames;	/* frames of new stacks in JIT code */
	uint64_t named;		/* ... named by the perf map */
	uint32_t used;		/* lines that named any: copied into each dump */
	bool no_map;		/* frames in JIT code and no perf map found */
	struct perf_map_stats map;
};

struct jit_names;

/* @pid's, nothing read yet; NULL: no memory. */
struct jit_names *jit_names__new(pid_t pid);
void jit_names__free(struct jit_names *j);

/*
 * A new stack of @n return addresses (@frames) in mappings @ms: each one
 * in anonymous memory is looked up in the perf map (read as far as it has
 * grown) and the line naming it kept; @kept (NULL: none) is called with
 * each line kept for the first time (the caller's frame table: the jit
 * records a dump writes). Returns how many such frames there were, or
 * -ENOMEM (also when @kept fails).
 */
int jit_names__note(struct jit_names *j, const struct mapset *ms, const uint64_t *frames,
		    uint32_t n, int (*kept)(const struct perf_map_entry *e, void *ctx), void *ctx);

/*
 * The line naming return address @addr, among those read, into @e; no
 * file is read (a dump's child calls this). Returns 0 or -ENOENT.
 */
int jit_names__find(struct jit_names *j, uint64_t addr, struct perf_map_entry *e);

/*
 * Call @fn for each kept line, oldest first (a later one names a range
 * made again); stops at @fn's first non-zero return and returns it.
 */
int jit_names__each(const struct jit_names *j,
		    int (*fn)(const struct perf_map_entry *e, void *ctx), void *ctx);

void jit_names__stats(const struct jit_names *j, struct jit_names_stats *st);

#endif /* HEAPSNOOP_JITNAMES_H */

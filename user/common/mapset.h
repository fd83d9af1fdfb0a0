/* SPDX-License-Identifier: MIT */
/*
 * mapset.h - the executable mappings of one process: what heapsnoop
 * writes as `map` records (docs/OUTPUT.md) and what the unwinder and the
 * symbolizer need to turn an address into (module, file offset, ELF
 * address), here or on another machine; and the anonymous executable
 * ones, where JIT compilers put their code (MAPPING_ANON: no file, no
 * CFI, frames named by the perf map). Filled from /proc (procmaps.h),
 * from the kernel's mapping records (mmaprec.h) or from `map` records
 * (records.h).
 */
#ifndef HEAPSNOOP_MAPSET_H
#define HEAPSNOOP_MAPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "text.h"

struct mapping {
	uint64_t start, end;	/* [start, end) virtual addresses */
	uint64_t offset;	/* file offset of start */
	uint64_t dev, ino;	/* the file's st_dev, st_ino; 0 if not known */
	char build_id[BUILD_ID_HEX_SIZE];	/* hex, or "-" */
	char *path;		/* as the process sees it; MAPPING_ANON: "[anon]" */
	uint32_t flags;		/* MAPPING_* */
};

/*
 * Anonymous executable memory (JIT code: V8, LuaJIT's traces): no file,
 * no CFI. Its path is MAPPING_ANON_PATH, or the name the process gave it
 * (PR_SET_VMA_ANON_NAME: "[anon:NAME]").
 */
#define MAPPING_ANON		(1u << 0)
#define MAPPING_ANON_PATH	"[anon]"


struct mapset {
	pid_t pid;
	size_t n;
	struct mapping *v;	/* sorted by start */
	/*
	 * Unique to this set's present content (mapset__touch()): a cache of
	 * pointers into @v checks it, even against a set later allocated at
	 * the same address.
	 */
	uint64_t gen;
	/*
	 * Readers on other threads (the tracer's unwinding pool): while any
	 * holds it, the set is neither changed nor freed by its owner, whose
	 * thread alone counts them (mapset__pin(), mapset__retire()).
	 */
	uint32_t pins;
	bool retired;		/* freed by the last unpin */
};

/* An empty set of mappings for @pid, filled by mapset__add; NULL: no memory. */
struct mapset *mapset__new(pid_t pid);

/* Give @pm a new generation: after any change of its mappings. */
void mapset__touch(struct mapset *pm);
void mapset__free(struct mapset *pm);

/*
 * A set the owner's thread hands to readers on others: pinned before,
 * unpinned once they are done with it. Retired instead of freed: at once
 * if no reader holds it, else by the last unpin. A pinned set is not
 * changed: mapset__clone() it, and retire the old one.
 */
void mapset__pin(struct mapset *pm);
void mapset__unpin(struct mapset *pm);
void mapset__retire(struct mapset *pm);

/* A copy of @pm (its paths duplicated), not pinned; NULL: no memory. */
struct mapset *mapset__clone(const struct mapset *pm);

/*
 * Add a copy of @m (path duplicated), keeping the set sorted; a mapping
 * overlapping an existing one replaces it. Returns 0 or -ENOMEM.
 */
int mapset__add(struct mapset *pm, const struct mapping *m);

/* The mapping holding @addr, or NULL (a binary search: O(log n)). */
const struct mapping *mapset__find(const struct mapset *pm, uint64_t addr);

#endif /* HEAPSNOOP_MAPSET_H */

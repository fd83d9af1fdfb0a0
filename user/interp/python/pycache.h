/* SPDX-License-Identifier: MIT */
/*
 * pycache.h - one process's CPython code objects as its records name
 * them: each read once (process_vm_readv, pycode.h), kept until the
 * record of its death is handled (its address may hold another code
 * object after), with the lines asked of it.
 *
 * A code object can die before the loader, some milliseconds behind,
 * handles a record that names it (the main module's code at the
 * interpreter's exit, exec()'d code at once), and another can take its
 * address; reading the address then would name the frame after
 * something else. So each code object's destructor sends its last look
 * (HS_EV_INTERP_CODE), and the code object a record names is, in order
 * of preference:
 *   1. the one cached, if no death of its address was handled since it
 *      was read (deaths are handled in the records' order);
 *   2. the last look of the first death of its address after the record
 *      (a death not handled yet: found ahead in the ring buffer, which
 *      the caller's `ahead` function looks through);
 *   3. read now, if after the read still no death of its address shows
 *      up ahead (a death before the read would be in the ring by then:
 *      the last look is sent before the memory is freed), and no exec of
 *      the process either (its memory is another image's then);
 *   4. none: the frame is named "<code gone>", never what the address
 *      holds now.
 */
#ifndef HEAPSNOOP_PYCACHE_H
#define HEAPSNOOP_PYCACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/interpframe.h"
#include "interp/python/pycode.h"
#include "interp/python/pylayout.h"

struct py_cache;

/*
 * A death of code object @addr ahead of the record at ring position
 * @pos: its last look (@len bytes: a struct hs_interp_code and its
 * table), the first one after @pos, or NULL. *@live: whether the
 * process's memory is still the record's image (no exec came since), so
 * that a read there names what the record saw.
 */
typedef const struct hs_interp_code *(*py_ahead_fn)(void *ctx, pid_t pid, uint64_t addr,
						      uint64_t pos, size_t *len, bool *live);

struct py_cache_stats {
	uint64_t hits, reads, from_death, gone;	/* how each code object was found */
	uint64_t live_lost;	/* read, then a death showed up ahead: its last look won */
	size_t entries;
};

/*
 * The code objects of process @pid, of layout @l, whose type is
 * @code_type (the process's &PyCode_Type). NULL: no memory.
 */
struct py_cache *py_cache__new(pid_t pid, const struct py_layout *l, uint64_t code_type,
			       py_ahead_fn ahead, void *ctx);
void py_cache__free(struct py_cache *c);

/* A frame of a code object, named. */
struct py_frame_name {
	const char *name, *file;	/* valid until the next call */
	int line;			/* 0: not known */
	bool incomplete;		/* not started yet: CPython shows no such frame */
	bool gone;			/* the code object could not be found: "<code gone>" */
	/*
	 * A word the caller may keep for this (code object, index) while the
	 * code object lives (0 until set; NULL: none): its frame's address.
	 */
	uint64_t *memo;
};

/*
 * Name the frame of code object @addr at code unit @index as it was when
 * the record at ring position @pos was made (see above).
 */
void py_cache__name(struct py_cache *c, uint64_t addr, int index, uint64_t pos,
		    struct py_frame_name *f);

/* The death of code object @addr is handled: its address is another's now. */
void py_cache__gone(struct py_cache *c, uint64_t addr);

/* A last look as a py_code (@c's strings decoded). 0 or -ENOMEM, -EINVAL. */
int py_cache__from_look(const struct hs_interp_code *look, size_t len, struct py_code *c);

void py_cache__stats(const struct py_cache *c, struct py_cache_stats *st);

#endif /* HEAPSNOOP_PYCACHE_H */

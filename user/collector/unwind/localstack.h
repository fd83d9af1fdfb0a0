/* SPDX-License-Identifier: MIT */
/*
 * localstack.h - the stack of the thread that called the allocator, from
 * inside the process: the collector's own unwinder by each module's
 * .eh_frame, or .debug_frame read from its file (ehframe.c, modcfi.c;
 * complete without frame pointers), each
 * address's rule kept in a lock-free cache so a hot call site is parsed
 * once; or frame pointers when asked (cheaper, complete only where every
 * caller keeps them). Frames inside the collector's own object are
 * dropped, so frame 0 is the return address into the allocator's caller,
 * as heapsnoop's. Why its own unwinder: docs/COLLECTOR.md ("Unwinding in
 * the process").
 */
#ifndef HEAPSNOOP_COLLECTOR_LOCALSTACK_H
#define HEAPSNOOP_COLLECTOR_LOCALSTACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The collector's own frames at most: the entry point, if not inlined more. */
#define LOCALSTACK_SKIP_MAX 8
/* --snip-pre and --snip-post each at most (heapsnoop's SNIP_MAX, user/tracer/options.c). */
#define LOCALSTACK_SNIP_MAX 33
/*
 * Return addresses a capture of @max frames needs room for: skipped
 * (the collector's own, --snip-pre's), kept, one to tell a cut.
 */
#define LOCALSTACK_BUF_FOR(max) (LOCALSTACK_SKIP_MAX + LOCALSTACK_SNIP_MAX + (max) + 1)
/* ... of the 31 one `~m#` token holds: every allocation's. */
#define LOCALSTACK_BUF LOCALSTACK_BUF_FOR(31)
/* The deepest capture: the table's LT_MAX_DEPTH (livetable.h), deep stacks'. */
#define LOCALSTACK_MAX_DEPTH 1024

/* Set by localstack__init(): read by the inline capture. */
extern uintptr_t localstack_self_start, localstack_self_end;	/* our text */
extern bool localstack_fp;	/* walk frame pointers, not the CFI */
/* --snip-pre, --snip-post (HEAPSNOOP_SNIP_PRE, _POST): frames dropped, as the tracer's. */
extern unsigned int localstack_snip_pre, localstack_snip_post;

/*
 * Learn the address range of the object that holds this file, and the
 * dynamic loader's count of unloads so far (dl_iterate_phdr, no
 * allocation); @use_fp chooses the frame-pointer walk; @snip_pre and
 * @snip_post (each clamped to LOCALSTACK_SNIP_MAX) the frames every
 * capture drops, as heapsnoop's --snip-pre and --snip-post
 * (user/tracer/track/trace.c): the innermost of a stack longer than
 * that, the outermost of a complete one longer than that.
 */
void localstack__init(bool use_fp, unsigned int snip_pre, unsigned int snip_post);

/* The frame-pointer walk into @ip[@max]; returns the count. */
int localstack__walk_fp(void **ip, int max);

/* Counts of the CFI walk's rule cache, for tests and benchmarks. */
struct localstack_stats {
	uint64_t walks;		/* stacks walked */
	uint64_t parsed;	/* ... not in the cache: found in .eh_frame */
	uint64_t evicted;	/* rules of this epoch put out of the cache by another pc's */
	uint64_t epochs;	/* times the cache was emptied (modules unloaded) */
};

/*
 * The rule cache's epoch: a rule is used only under the epoch it was
 * parsed in. Moved by localstack__unloading() and __unloaded(), and by
 * the walk where it finds an unload neither saw.
 */
extern _Atomic uint32_t localstack_epoch;

/*
 * A module may be about to be unloaded (dlclose.c, the collector's
 * dlclose, before the C library's): every rule cached so far is
 * forgotten, so none is used for what the loader maps at its addresses
 * next. No allocation, no lock: one atomic add.
 */
void localstack__unloading(void);

/*
 * ... and after it: the loader's count of unloads taken (dl_iterate_phdr,
 * so that the walk does not count this one again as unseen), the epoch
 * moved once more. Not for a signal handler (the loader's lock).
 */
void localstack__unloaded(void);

/*
 * The CFI walk from its own frame into @ip[@max], innermost first (its
 * own pc, then return addresses): the count. *@broken is set when the
 * walk stopped before the outermost frame without reaching @max: a frame
 * with no rule it can follow (no FDE and no safe frame-pointer step, a
 * DWARF expression it does not handle: ehframe.h), or a step that got
 * nowhere (same pc and sp) or went down the stack. Never allocates; a
 * walk whose rules are all cached takes no lock and makes no call (one
 * atomic load of the epoch, a few loads a frame); a rule not cached is
 * parsed under the dynamic loader's lock (dl_iterate_phdr).
 */
int localstack__walk(void **ip, int max, bool *broken);

/*
 * The rule cache's counts so far: the calling thread's walks, parses
 * and evictions, and the changes of epoch any thread saw.
 */
void localstack__stats(struct localstack_stats *st);

/* localstack__capture()'s *cut: the stack went on past the frames kept. */
#define LOCALSTACK_CUT_DEPTH (1u << 0)
/* ... or a frame's caller was not recovered: the stack stops early. */
#define LOCALSTACK_CUT_UNREADABLE (1u << 1)

/*
 * Up to @max (<= LOCALSTACK_MAX_DEPTH) return addresses of the calling
 * thread, call site of the allocator first (after --snip-pre's), in place
 * in @buf (LOCALSTACK_BUF_FOR(@max) entries): *@frames
 * points at the first. *@cut gets LOCALSTACK_CUT_DEPTH when the stack went
 * on past @max frames (the walk found one more), LOCALSTACK_CUT_UNREADABLE
 * when the walk could not go on to a frame's caller, else 0 (and then
 * --snip-post's outermost frames are dropped). Returns the
 * count (0: none found). Inline, so that the collector's caller is unwound
 * through as few of its own frames as the compiler leaves; those there
 * are are dropped by address, and nothing is copied.
 */
static inline __attribute__((always_inline)) int
localstack__capture(uint64_t *buf, int max, const uint64_t **frames, unsigned int *cut)
{
	int pre = (int)localstack_snip_pre, post = (int)localstack_snip_post;
	bool broken = false;
	int n, k = 0, room;

	if (max > LOCALSTACK_MAX_DEPTH)
		max = LOCALSTACK_MAX_DEPTH;
	/* One frame more than kept: there, the stack is cut. */
	room = LOCALSTACK_SKIP_MAX + pre + max + 1;
	n = localstack_fp ? localstack__walk_fp((void **)buf, room) :
		localstack__walk((void **)buf, room, &broken);
	while (k < n && k < LOCALSTACK_SKIP_MAX && buf[k] >= localstack_self_start &&
	       buf[k] < localstack_self_end)
		k++;
	/* --snip-pre where the stack is longer, as the tracer's. */
	if (pre < n - k)
		k += pre;
	*frames = buf + k;
	if (n - k > max) {
		*cut = LOCALSTACK_CUT_DEPTH;
		return max;
	}
	*cut = broken ? LOCALSTACK_CUT_UNREADABLE : 0;
	/* --snip-post: of a complete stack only (its outermost are known). */
	return !*cut && post < n - k ? n - k - post : n - k;
}

#endif /* HEAPSNOOP_COLLECTOR_LOCALSTACK_H */

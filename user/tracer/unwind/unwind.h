/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - the frames of an allocation's stack from the registers and
 * the top of the stack the BPF side copied (struct hs_user_stack,
 * --unwind dwarf), by each module's CFI (cfi.c), with frame pointers
 * where a module or an address has none: JIT code in anonymous
 * executable memory (V8 keeps its frame pointer chain through every kind
 * of frame), a library built without unwind tables. Address to module
 * by the process's mappings (mapset.h), anonymous ones included.
 *
 * The walk is framehop's or perf's: per frame, find the rule for the
 * return address (minus one, so a call at a function's end finds its own
 * row), compute the CFA, read the return address and the saved registers
 * from the copy. A stack ends complete where the CFI says the return
 * address is undefined (_start, clone3's thread start) or it is 0;
 * anything else that stops it early is said in the result's flags.
 */
#ifndef HEAPSNOOP_UNWIND_H
#define HEAPSNOOP_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfi.h"
#include "heapsnoop/event.h"
#include "maps/procmaps.h"

/* unwind__stack() result flags (the reasons a stack is not complete) */
#define UNWIND_CUT	(1u << 0)	/* ran past the copy (--stack-copy) */
#define UNWIND_DEPTH	(1u << 1)	/* more frames than asked for */
#define UNWIND_FAULT	(1u << 2)	/* a frame could not be recovered */

struct unwind_stats {
	uint64_t stacks;	/* unwound */
	uint64_t complete;	/* reached the outermost frame */
	uint64_t cut, depth, fault;	/* ended early (UNWIND_*) */
	uint64_t frames;	/* recovered, beyond each call site */
	uint64_t fp_frames;	/* of those, by frame pointer (no CFI there) */
	uint64_t jit_frames;	/* ... into anonymous executable memory (JIT code) */
	uint64_t slow_frames;	/* ... by a row with DWARF expressions */
	uint64_t paged;		/* stacks copied page by page (a page not there) */
	uint64_t holes;		/* ... the pages not there, in all of them */
};

struct unwinder;

struct unwinder *unwinder__new(void);
void unwinder__free(struct unwinder *u);

/*
 * The mappings of the process being unwound: @stale false for those known
 * now; true once an address fell in none of them (the process may have
 * mapped a module since they were read: return fresh ones if there can be
 * any, else the same). NULL: none known.
 */
typedef const struct mapset *(*unwind_maps_fn)(void *ctx, bool stale);

/*
 * Unwind @us (@len bytes of record, its size checked here) of process @pid.
 * Writes at most @max return addresses, innermost (the call site) first,
 * into @frames and returns how many (>= 1), or -EINVAL for a malformed
 * record. *@flags gets UNWIND_* for a stack that is not complete.
 */
int unwind__stack(struct unwinder *u, pid_t pid, unwind_maps_fn maps, void *ctx,
		  const struct hs_user_stack *us, size_t len, uint64_t *frames, unsigned int max,
		  uint32_t *flags);

/*
 * A frame whose registers a caller wants (an interpreter's loop keeps the
 * running function's exact position in one): the first frame, past the
 * call site, whose return address (minus one) is in [@lo, @hi); its
 * registers (DWARF numbering) and which are known, set by the walk.
 */
struct unwind_grab {
	uint64_t lo, hi;
	uint64_t regs[CFI_NREGS];
	uint32_t known;		/* bit r: regs[r] is known */
	bool found;
};

/* unwind__stack() that also fills @grab (NULL: the same as unwind__stack). */
int unwind__stack_grab(struct unwinder *u, pid_t pid, unwind_maps_fn maps, void *ctx,
		       const struct hs_user_stack *us, size_t len, uint64_t *frames,
		       unsigned int max, uint32_t *flags, struct unwind_grab *grab);

/* Unwinding counts so far, and the CFI tables' (-v). */
void unwinder__stats(const struct unwinder *u, struct unwind_stats *st, struct cfi_stats *cst);

#endif /* HEAPSNOOP_UNWIND_H */

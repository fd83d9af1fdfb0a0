/* SPDX-License-Identifier: MIT */
/*
 * unwind/unwind.h - the frames of an allocation's stack from the registers
 * and the top of the stack the BPF side copied (struct hs_user_stack,
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
 *
 * One unwinder for both programs (docs/DESIGN.md, "Unwinding later,
 * elsewhere"): heapsnoop unwinds each record as it comes, its modules
 * reached through /proc; heapdecode unwinds the same registers and bytes
 * kept in a log (`ustack` records), its modules found by build ID. Only
 * where the files come from differs (struct cfi_src).
 */
#ifndef HEAPSNOOP_UNWIND_H
#define HEAPSNOOP_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/event.h"
#include "mapset.h"
#include "unwind/cfi.h"

/* unwind__stack() result flags (the reasons a stack is not complete) */
#define UNWIND_CUT	(1u << 0)	/* ran past the copy (--stack-copy) */
#define UNWIND_DEPTH	(1u << 1)	/* more frames than asked for */
#define UNWIND_FAULT	(1u << 2)	/* a frame could not be recovered */

struct unwind_stats {
	uint64_t stacks;	/* unwound */
	uint64_t complete;	/* reached the outermost frame */
	uint64_t cut, depth, fault;	/* ended early (UNWIND_*; cut: by the copy's size) */
	/*
	 * ... cut where a short copy ended (HS_EVF_SHORT_COPY: the ring had no
	 * room for the whole one), out of @cut: split off by
	 * trace__unwind_stats(), which sees the records' flags; 0 here.
	 */
	uint64_t short_cut;
	uint64_t frames;	/* recovered, beyond each call site */
	uint64_t fp_frames;	/* of those, by frame pointer (no CFI there) */
	uint64_t jit_frames;	/* ... into anonymous executable memory (JIT code) */
	uint64_t slow_frames;	/* ... by a row with DWARF expressions */
	uint64_t paged;		/* stacks copied page by page (a page not there) */
	uint64_t holes;		/* ... the pages not there, in all of them */
	uint64_t spliced;	/* stacks whose copy stopped at a tail, spliced in */
	uint64_t tail_frames;	/* ... the frames their tails gave */
	uint64_t tail_missed;	/* ... whose walk did not meet the tail: cut there */
	uint64_t tail_unknown;	/* ... named a tail no longer kept: cut there */
	uint64_t tails_built;	/* tails made for threads' next stacks */
};

struct unwinder;

/* An unwinder whose modules' files come from @src (cfi.h); NULL: no memory. */
struct unwinder *unwinder__new(const struct cfi_src *src);
void unwinder__free(struct unwinder *u);

/*
 * The mappings of the process being unwound: @stale false for those known
 * now; true once an address fell in none of them (the process may have
 * mapped a module since they were read: return fresh ones if there can be
 * any, else the same). NULL: none known.
 */
typedef const struct mapset *(*unwind_maps_fn)(void *ctx, bool stale);

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

/*
 * The tail of a stack (include/heapsnoop/event.h's struct hs_tail), as an
 * unwind left it: where it starts, the state the walk had there that the
 * rest depends on, the words above it the rest was unwound from, and the
 * frames. Made by unwind__run() (unwind_req.build), given to the thread by
 * tails.h, and spliced into a record that names it. Immutable once made;
 * its owner (tails.c) counts who reads it.
 */
struct unwind_tail {
	uint64_t id;		/* tails.c's, in records */
	pid_t pid, tid;
	uint64_t start;		/* the CFA at which it begins */
	uint64_t ra;		/* the return address the walk had there: its first pc */
	/*
	 * The rule of that pc's row (@first_kind TS_RULE), which another
	 * return address there may share: its caller the same, the tail holds
	 * (a function calling from another of its call sites).
	 */
	struct cfi_rule first_rule;
	bool first_by_rule;
	uint32_t regs_need;	/* the registers there its frames depend on (bit r) */
	uint64_t regs[CFI_NREGS];	/* ... their values */
	uint32_t flags;		/* UNWIND_* of its end (0: complete) */
	uint32_t nwords;
	struct hs_tail_word words[HS_TAIL_WORDS];	/* offsets from @start */
	uint32_t pins;		/* tails.c's: jobs reading it */
	bool retired;		/* ... freed by the last unpin */
	/*
	 * Its states: state j is where the walk steps from to frames[j] (0:
	 * @start and @ra), the stack pointer there, the registers the frames
	 * from there on need (bit r; the SP and the RA apart) and their
	 * values (state_val[j]: the first of them in @vals, by register).
	 * A walk that meets any of them takes the tail up from there.
	 */
	uint64_t *state_sp;	/* ascending */
	uint32_t *state_need;
	uint32_t *state_val;
	uint64_t *vals;
	uint32_t nframes;
	uint64_t frames[];	/* after @ra, outward */
};

/* What to unwind (unwind__run()). */
struct unwind_req {
	pid_t pid;
	unwind_maps_fn maps;
	void *ctx;		/* @maps' */
	const struct hs_user_stack *us;	/* the record's stack, @len bytes (checked) */
	size_t len;
	uint64_t *frames;	/* out: @max at most, innermost (the call site) first */
	unsigned int max;
	struct unwind_grab *grab;	/* NULL: none */
	/*
	 * The tail the record names (us->tail), NULL if it names none or one
	 * not known: then the stack is said cut where the copy ends.
	 */
	const struct unwind_tail *tail;
	bool build;		/* make a tail of this stack, for the thread's next ones */
	uint64_t hint;		/* ... starting at or above this address (tails__hint()) */
};

/* What came of it. */
struct unwind_res {
	int n;			/* frames, >= 1; -EINVAL for a malformed record */
	uint32_t flags;		/* UNWIND_* for a stack that is not complete */
	bool spliced;		/* the record's tail is in @frames */
	bool tail_missed;	/* ... the walk did not meet it: cut there */
	struct unwind_tail *built;	/* unwind_req.build's, malloc'ed (the caller's); NULL: none */
};

/*
 * Unwind @rq->us of process @rq->pid: frames into @rq->frames, up to the
 * copy's end, or to the record's tail and on through its frames. A stack
 * whose walk did not meet its tail at the tail's start, in the state it
 * was taken in, is cut there (UNWIND_CUT, *@rs->tail_missed). Fills @rs;
 * returns @rs->n.
 */
int unwind__run(struct unwinder *u, const struct unwind_req *rq, struct unwind_res *rs);

/* unwind__run() without a tail: frames into @frames, their count or -EINVAL. */
int unwind__stack_grab(struct unwinder *u, pid_t pid, unwind_maps_fn maps, void *ctx,
		       const struct hs_user_stack *us, size_t len, uint64_t *frames,
		       unsigned int max, uint32_t *flags, struct unwind_grab *grab);

/*
 * Its counts now, and back to them: a walk whose result is thrown away
 * (pool.h: one that needed newer mappings) counts for nothing.
 */
void unwinder__stats_save(const struct unwinder *u, struct unwind_stats *st);
void unwinder__stats_restore(struct unwinder *u, const struct unwind_stats *st);

/* Unwinding counts so far, and the CFI tables' (-v). */
void unwinder__stats(const struct unwinder *u, struct unwind_stats *st, struct cfi_stats *cst);

#endif /* HEAPSNOOP_UNWIND_H */

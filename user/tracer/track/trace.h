/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the loader's state between the ring buffer and the writer:
 * events in (hs_event, include/heapsnoop/event.h), and for each traced
 * process its live allocations, its unique stacks and its mappings out.
 * Also the user-side counts of everything that did not add up.
 *
 * Every process has tables of its own, so a process that exits (or execs)
 * is dropped in one step and its memory returns, whatever the others hold.
 *
 * Mappings come from one of two sources: /proc/PID/maps, read when a
 * process is first seen and again when a new stack has a frame outside
 * them (-p and launch mode); or mapping records (trace__map_*), fed from
 * the kernel's perf mmap records (mmaprec.c) in system-wide mode,
 * which stay right for processes that are gone before anyone could read
 * their /proc files.
 */
#ifndef HEAPSNOOP_TRACE_H
#define HEAPSNOOP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "acct.h"
#include "heapsnoop/event.h"
#include "maps/jitnames.h"
#include "maps/procmaps.h"
#include "stacks.h"
#include "stacktree.h"
#include "keptstk.h"
#include "tracker.h"
#include "unwind/unwind.h"

struct proc;

struct trace_opts {
	unsigned int snip_pre;	/* innermost frames to drop */
	unsigned int snip_post;	/* outermost frames to drop (complete stacks) */
	bool map_records;	/* mappings from trace__map_* (system-wide) */
	/* Records carry stacks to unwind (--unwind dwarf): unwind.c. */
	bool unwind;
	/*
	 * ... on that many threads beside the loop's (unwind/pool.h), the
	 * records looked at ahead (trace__ahead()); 0: the loop's alone.
	 */
	unsigned int unwind_threads;
	/*
	 * Stack tails (unwind/tails.h): records' copies that stop at one,
	 * the tails made for the threads' next stacks. NULL: none.
	 */
	struct tails *tails;
	/*
	 * --keep-stacks: bytes of live blocks' stack copies kept for the
	 * dumps' `ustack` records (keptstk.h); 0: none kept.
	 */
	uint64_t keep_stacks;
	/* --no-perf-map: frames in JIT code left unnamed (maps/jitnames.h). */
	bool no_jit_names;
	/*
	 * --sample-bytes: the mean; live blocks keep their real sizes, the
	 * whole-run counts (acct) and live_estimate estimates (sampling.h);
	 * 0: every allocation
	 */
	uint64_t sample_bytes;
	/*
	 * Called when a process that allocated exits (HS_EV_EXIT), before
	 * its live allocations and counts are dropped; NULL: just drop them.
	 */
	void (*on_exit)(struct proc *p, void *ctx);
	/*
	 * With map_records: apply the mapping records written so far, called
	 * when an address to unwind is in no mapping (its mmap's record may
	 * have come after the last drain); NULL: none to apply.
	 */
	void (*sync_maps)(void *ctx);
	/*
	 * The ring buffer's producer position now (ring__head(), stream/ring.h): records
	 * reserved after it have a higher seq. NULL: the last record's seq.
	 */
	uint64_t (*ring_head)(void *ctx);
	void *ctx;
	/*
	 * Interpreter frames (interp/interp.h), NULL: none. Each record of
	 * the interpreters' and of processes' lives to @interp_record
	 * first; each allocation's native frames (after --snip-*) through
	 * @interp_splice, which returns them with its interpreter frames
	 * among them in @out and the STACK_* bits they add in *@flags.
	 */
	void (*interp_record)(void *ictx, const struct hs_event *ev, size_t len, uint64_t seq);
	uint32_t (*interp_splice)(void *ictx, const struct hs_event *ev, uint64_t seq,
				  const uint64_t *native, uint32_t n, bool native_cut,
				  const struct unwind_grab *grab, uint64_t *out, uint32_t max,
				  uint32_t *flags);
	/*
	 * The native frame of process @pid whose registers @interp_splice
	 * wants (unwind.h's unwind_grab: [*@lo, *@hi)); false: none.
	 */
	bool (*interp_grab)(void *ictx, pid_t pid, uint64_t *lo, uint64_t *hi);
	void *ictx;
};

/* What the user side saw that does not add up, beside the BPF counters. */
struct trace_stats {
	uint64_t allocs, frees;		/* events handled; frees: with realloc_moves */
	uint64_t realloc_moves;		/* old blocks released by a moving realloc */
	uint64_t unknown_frees;		/* not live: allocated before tracing (or unsampled) */
	uint64_t missed_frees;		/* address handed out again while live */
	uint64_t realloc_races;		/* old block re-allocated mid-realloc */
	uint64_t bad_events;		/* malformed ring buffer records */
	uint64_t no_memory;		/* events dropped: out of memory */
	uint64_t truncated_stacks;	/* allocations with a cut stack */
	/*
	 * ... of them, cut where a short copy ended (HS_EVF_SHORT_COPY);
	 * trace__unwind_stats() takes them out of the unwinder's cut
	 */
	uint64_t short_cut;
	uint64_t shed_kept;		/* recorded as samples while load was shed */
	uint64_t stack_faults;		/* ... with a frame that could not be read */
	uint64_t jit_frames;		/* frames of new stacks in JIT code */
	uint64_t jit_named;		/* ... named by their process's perf map or jitdump */
	uint64_t procs_seen;		/* processes that allocated while traced */
	uint64_t exits;			/* of those, ended while traced */
	uint64_t execs;			/* images replaced by exec while traced */
	uint64_t reaped;		/* ended by trace__reap: their exit was lost */
	uint64_t exit_live, exit_bytes;	/* live at their exit (or exec) */
	/*
	 * Threads whose creation was seen (HS_EV_THREAD), and of them those
	 * whose creator is not kept: its record malformed or unwound to
	 * nothing, or past creators.h's CREATORS_MAX_THREADS (its stacks
	 * end where it started).
	 */
	uint64_t threads_created, creators_dropped;
	uint64_t collapsed;		/* allocations put under "[over the memory bound]" */
};

struct proc {
	pid_t pid;
	char comm[16];			/* name, "" if not known */
	struct mapset *maps;		/* last known, or NULL */
	struct jit_names *jit;		/* its JIT frames' names, once it has any */
	uint64_t maps_read_ns;
	uint64_t maps_read_seq;		/* records above it may be newer than the maps */
	bool gone;			/* exited; maps are the last known */
	bool allocated;			/* has sent an allocation */
	struct tracker *live;		/* its live allocations */
	struct stack_tree *stacks;	/* its unique stacks */
	struct acct acct;		/* whole-run counts, the peak */
	/*
	 * Its live bytes as acct counts them: with --sample-bytes or shed
	 * load each sampled block's estimate (sampling.h), else
	 * tracker__bytes().
	 */
	uint64_t live_estimate;
	uint64_t shed_kept;		/* its allocations recorded as shed samples */
	/* Its threads' creators (creators.h), once it made one; NULL: none. */
	struct creators *creators;
	uint64_t created_by;		/* the boundary frame's address; 0: not yet interned */
	/* --keep-stacks: its live blocks' stack copies (keptstk.h); NULL: none yet. */
	struct kept_stacks *kept;
};

/*
 * Frames to walk or unwind per stack: the REC_MAX_DEPTH a record keeps
 * (records.h) plus those --snip-pre/--snip-post drop; for BPF's
 * frame-pointer walk (@bpf), at most its HS_BPF_MAX_FRAMES.
 */
static inline unsigned int trace_max_frames(unsigned int snip_pre, unsigned int snip_post,
					    bool bpf)
{
	unsigned int n = REC_MAX_DEPTH + snip_pre + snip_post;

	return bpf && n > HS_BPF_MAX_FRAMES ? HS_BPF_MAX_FRAMES : n;
}

/*
 * --unwind fp where the verifier refuses trace_max_frames()'s walk
 * (attach/bpfload.c tries it first): a token's HS_MAX_DEPTH plus the
 * snips, at most 64, the walk every kernel took before stacks kept any
 * depth.
 */
static inline unsigned int trace_fallback_frames(unsigned int snip_pre, unsigned int snip_post)
{
	unsigned int n = HS_MAX_DEPTH + snip_pre + snip_post;

	return n < 64 ? n : 64;
}

struct trace;

/* --keep-stacks: the budget and what became of the copies offered (keptstk.h). */
const struct kept_budget *trace__kept(const struct trace *t);

struct trace *trace__new(const struct trace_opts *opts);
void trace__free(struct trace *t);

/*
 * Handle one ring buffer record of @len bytes; @seq is its position in the
 * ring's stream + 1 (stream/ring.h), which orders it against the positions
 * realloc records carry (HS_EV_FREE), so it must grow from record to
 * record. Returns 0 (never fails).
 */
int trace__event(struct trace *t, const void *data, size_t len, uint64_t seq);

/*
 * A ring record of sequence @seq (@data, @len bytes) looked at before its
 * turn (stream/reader.h's reader_ahead_fn): an allocation's stack given
 * to the unwinding pool, which trace__event() takes back. Returns false
 * where looking ahead must stop: the pool is full, or the record changes
 * what later ones are unwound against (an exec, exit or fork: handled in
 * turn first). Always true without a pool (nothing to start).
 */
bool trace__ahead(struct trace *t, const void *data, size_t len, uint64_t seq);

/*
 * Start tracking @pid and read its mappings now (-p and launch; in
 * record mode, a process first seen has its /proc maps read once, as perf
 * synthesizes the mappings of processes that predate it).
 * Returns the process or NULL (out of memory).
 */
struct proc *trace__add_proc(struct trace *t, pid_t pid);
/* Re-read @pid's mappings (e.g. at its exit stop, or after dlopen). */
void trace__refresh_maps(struct trace *t, pid_t pid);
/* @pid has exited: keep its last mappings for the final report. */
void trace__proc_gone(struct trace *t, pid_t pid);

/*
 * -a: the processes whose exit event was lost (a full ring buffer): each
 * whose pid no longer exists is ended now, as its exit would have (its
 * live set written by on_exit or dropped, and counted), so no dump shows
 * it live. Returns how many.
 */
size_t trace__reap(struct trace *t);

/*
 * Mapping records (record mode): @pid mapped @m (replacing what it
 * overlaps); @pid was forked by @ppid (a copy of the parent's mappings);
 * @pid exec'd (no mappings until the new image's); @pid is named @comm.
 * Return 0 or -ENOMEM.
 */
int trace__map_add(struct trace *t, pid_t pid, const struct mapping *m);
int trace__map_fork(struct trace *t, pid_t ppid, pid_t pid);
int trace__map_exec(struct trace *t, pid_t pid);
void trace__set_comm(struct trace *t, pid_t pid, const char *comm);

/*
 * The frames of the processes' stacks that are not native code
 * (frametab.h: interpreter frames' synthetic addresses, JIT ranges), each
 * process's forgotten when it ends or execs; what every dump names them
 * by (dump.c).
 */
struct frametab *trace__frames(const struct trace *t);

const struct trace_stats *trace__stats(const struct trace *t);
/* --unwind dwarf: the unwinder's counts and its tables'; -ENOENT if off. */
int trace__unwind_stats(const struct trace *t, struct unwind_stats *st, struct cfi_stats *cst);

/*
 * The unwinding pool's threads beside the loop's (--unwind-threads) into
 * *@threads, and the stacks they unwound into *@stacks. Returns 0, or
 * -ENOENT: no pool (--unwind fp).
 */
int trace__pool_share(const struct trace *t, unsigned int *threads, uint64_t *stacks);
struct proc *trace__find_proc(const struct trace *t, pid_t pid);

/*
 * A dump is written: the JIT frames of @only (NULL: of every process)
 * that no perf map or jitdump named yet looked up again, the files read
 * as they have grown (jitnames.h jit_names__retry()); what they name
 * goes into the frame table, for the dump's jit records.
 */
void trace__retry_jit(struct trace *t, struct proc *only);

/*
 * The processes known now, most live bytes first (then lowest pid), as a
 * malloc'ed array of *@n pointers the caller frees; NULL if none or out
 * of memory. Valid until the next trace__event.
 */
struct proc **trace__procs(const struct trace *t, size_t *n);

/* Totals over every process now. */
size_t trace__live_count(const struct trace *t);
/* Live bytes, estimated with --sample-bytes (struct proc's live_estimate). */
uint64_t trace__live_bytes(const struct trace *t);
/* --sample-bytes' mean, 0: every allocation is recorded. */
uint64_t trace__sample_bytes(const struct trace *t);
size_t trace__stack_count(const struct trace *t);
/*
 * Bytes held by the live tables, and by the stack tables (trees, acct.h's
 * beside, the cache in front).
 */
size_t trace__live_memory(const struct trace *t);
size_t trace__stack_memory(const struct trace *t);

/*
 * heapsnoop agent's bound (--max-memory): @on, every allocation handled
 * from now on is put under one stack of its process, the frame
 * "[over the memory bound]" (a frame of kind TRACE_OVER_KIND, named as
 * interpreter frames are: frametab.h), counted (trace_stats.collapsed):
 * no stack is made, the live bytes and blocks stay exact; off, stacks
 * again.
 */
#define TRACE_OVER_KIND	"bound"
#define TRACE_OVER_FUNC	"[over the memory bound]"
void trace__collapse(struct trace *t, bool on);

/* What the stack tables of every process hold, summed (-v). */
struct trace_stack_stats {
	struct stack_tree_stats tree;
	size_t wide;		/* stacks whose counts outgrew their node */
	size_t snapshots;	/* at-peak values kept now */
	size_t acct_bytes;	/* both tables' memory */
	size_t snap_bytes;	/* ... the snapshots' */
	size_t cache_bytes;	/* the stacks interned last (stackcache.h), one for all */
};

void trace__stack_stats(const struct trace *t, struct trace_stack_stats *s);

#endif /* HEAPSNOOP_TRACE_H */

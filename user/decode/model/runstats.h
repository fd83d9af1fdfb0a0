/* SPDX-License-Identifier: MIT */
/*
 * runstats.h - heapdecode's view of heapsnoop's whole-run accounting:
 * the `proc`, `stack` and `sample` records of a log (docs/OUTPUT.md),
 * gathered across its dumps. A `stack` record carries a stack's counts
 * since tracing began and is written only when they changed, so the
 * state as of a dump is the last record of each stack up to it; each
 * change of a stack's live bytes is kept (with its dump's number) for
 * --growth, each `sample` for the timeline.
 *
 * Memory grows with unique stacks and with changes, never with dumps in
 * which nothing changed.
 */
#ifndef HEAPSNOOP_RUNSTATS_H
#define HEAPSNOOP_RUNSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"
#include "stacks.h"

/* One process's last `proc` record (whole-run totals, the peak). */
struct rs_proc {
	int pid;
	char comm[16];
	uint64_t peak, peak_count;
	int64_t peak_time_ms;		/* wall clock, ms since the epoch */
	uint64_t allocs, allocated, frees, temporary, live, bytes;
	uint64_t shed;			/* of allocs, samples while the tracer shed load */
	size_t nsamples, cap;		/* its `sample` records, in order: */
	struct rs_sample { int64_t time_ms; uint64_t live, bytes; } *samples;
};

/* A stack's live values from dump @dump on (the dump its record was in). */
struct rs_point {
	unsigned int dump;
	uint64_t live_count, live_bytes;
};

struct runstats;
struct nodetab;

struct runstats *runstats__new(void);
void runstats__free(struct runstats *rs);

/*
 * Take a parsed `proc`, `stack` or `sample` record @rec, read in dump
 * number @dump (1 for the first dump's lines; 0 before any), a `stack`
 * record's node= named through @nt. Other types are ignored. Returns 0,
 * a negative hs_err for a malformed token or a node= that names none,
 * or -HS_ENOSPC; a positive hs_err for a stack whose continuation token
 * broke (records__stack()): taken with the frames before it, marked cut
 * (STACK_TRUNCATED).
 */
int runstats__take(struct runstats *rs, const struct record *rec, unsigned int dump,
		   const struct nodetab *nt);

/*
 * --base: subtract @base's values from @rs's, stack by stack (pid and
 * frames) and process by process; the results are differences (read as
 * int64_t). Returns 0 or -HS_ENOSPC.
 */
int runstats__subtract(struct runstats *rs, const struct runstats *base);

/*
 * Dump number @dump was written at @time_ms (wall clock, ms since the
 * epoch); the dump times, by number (index 0 unused), in *@n + 1 entries.
 * Returns 0 or -HS_ENOSPC.
 */
int runstats__dump_time(struct runstats *rs, unsigned int dump, int64_t time_ms);
const int64_t *runstats__dump_times(const struct runstats *rs, unsigned int *n);

/*
 * Process @p's live bytes over time: its samples and its peak, in time
 * order, a malloc'ed array of *@n the caller frees; NULL: no memory.
 */
struct rs_sample *runstats__series(const struct rs_proc *p, size_t *n);

/* Process @pid's last `proc` record, or NULL (O(1)). */
const struct rs_proc *runstats__proc(const struct runstats *rs, int pid);

/* The processes seen, most peak bytes first; valid until the next take. */
struct rs_proc **runstats__procs(struct runstats *rs, size_t *n);

/*
 * The stacks seen (struct stack's whole-run fields hold their last
 * record's values), a malloc'ed array of *@n the caller frees; NULL if
 * none or out of memory. The index of a stack in it is its id for
 * runstats__history.
 */
struct stack **runstats__stacks(struct runstats *rs, size_t *n);
/* The changes of the live values of stack @id, oldest first (*@n). */
const struct rs_point *runstats__history(const struct runstats *rs, size_t id, size_t *n);

#endif /* HEAPSNOOP_RUNSTATS_H */

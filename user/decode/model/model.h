/* SPDX-License-Identifier: MIT */
/*
 * model.h - heapdecode's model of a log: what every analysis and every
 * writer reads, and the only thing they read. It takes a log's lines
 * (logread.h) and holds, for the one dump it describes (the last, or the
 * one --dump names: each dump is a whole live set, and adding them up
 * would count blocks repeatedly):
 *
 *   the live set    each unique (pid, stack) of the dump's `live` records
 *                   and of the exit sections before it, its allocations
 *                   and bytes summed (estimated when the dump is sampled:
 *                   livecount.h);
 *   the whole run   the `proc`, `stack` and `sample` records up to that
 *                   dump (runstats.h), and when each dump was written;
 *   the join        both by (pid, stack): a stack's live values beside
 *                   its whole-run counts (join.h);
 *   the mappings    each process's, from the dump's `map` records
 *                   (maptree.h), which name its frames (symbolizer.h);
 *   a baseline      with --base, subtracted: every value a difference.
 *
 * Memory grows with unique stacks, never with lines. It knows nothing of
 * any output.
 */
#ifndef HEAPDECODE_MODEL_H
#define HEAPDECODE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/join.h"
#include "model/runstats.h"
#include "stacks.h"
#include "symbolizer.h"

struct hd_model;
struct hd_line;

/* What the model describes of a log, and how it names frames. */
struct hd_model_opts {
	const char *elf;	/* -e: every address is an address of this ELF */
	unsigned int dump;	/* --dump: the Nth dump of the input (1: the
				 * first), 0: the last */
	/*
	 * --dump all: called with each dump's live set once it is complete
	 * (at the next dump's header; the last one is the caller's), NULL:
	 * only one dump is described.
	 */
	void (*each_dump)(struct hd_model *m, void *ctx);
	void *ctx;
	/*
	 * --frames: the live set seen with only this kind's frames
	 * (frameview.h: "python", "lua", "interpreter"), NULL: every frame.
	 */
	const char *frames;
	/*
	 * --no-unwind-offline: `ustack` records ignored, every stack the
	 * tracer's online one; else they are unwound again here
	 * (input/ustacks.h).
	 */
	bool no_offline;
};

/* An empty model whose frames @sym names; NULL: no memory. */
struct hd_model *hd_model__new(const struct hd_model_opts *opts, struct symbolizer *sym);
void hd_model__free(struct hd_model *m);

/* What the offline unwinding of `ustack` records did (ustacks.h), on @out; nothing if none. */
void hd_model__report_offline(const struct hd_model *m, FILE *out);

/*
 * Take one line of the log. Returns 0, or a negative hs_err for a
 * malformed `~m#` record in it (the caller reports it) or -HS_ENOSPC.
 */
int hd_model__take(struct hd_model *m, const struct hd_line *l);

/*
 * -s: take from @l only what names frames and what the dump says (`map`
 * and `dump` records, exit sections, whole-run records), not its live
 * blocks, for a writer that writes each line as it is read. Returns 0 or
 * a negative hs_err.
 */
int hd_model__follow(struct hd_model *m, const struct hd_line *l);

/*
 * The stack of @l's `live` or `stack` record (r->token or r->has_node),
 * in either form: a node= named through the `tree` and `node` records
 * taken so far. As nodetab__record() (records__stack()'s values).
 */
int hd_model__stack_of(const struct hd_model *m, const struct hd_line *l, uint64_t *size,
		       uint64_t *frames, uint32_t *depth);

/*
 * --base: subtract @base's live set and whole-run counts (matched by pid
 * and addresses: a dump of the same process) from @m's. Every value then
 * is a difference: growth positive, shrinkage negative (read as int64_t).
 * @base must live as long as @m (its mappings name the stacks only it
 * had). Returns 0 or -HS_ENOSPC.
 */
int hd_model__subtract(struct hd_model *m, struct hd_model *base);
/* Was a baseline subtracted? */
bool hd_model__is_diff(const struct hd_model *m);

/* How many dumps were taken in (up to the one --dump names). */
unsigned int hd_model__dumps(const struct hd_model *m);

/*
 * Did the last dump taken in end before its `end-dump` record (a log cut
 * while the tracer wrote it, or read while it writes)? Its live set may
 * lack blocks, its whole-run records may be missing.
 */
bool hd_model__incomplete(const struct hd_model *m);

/*
 * How many record lines (a heapsnoop keyword: dump, live, map, ...) and
 * `~m#` tokens were read, of any kind: 0 for a file that is no log.
 */
uint64_t hd_model__records(const struct hd_model *m);
/* When each was written, ms since the epoch, by number (index 0 unused; *@n). */
const int64_t *hd_model__dump_times(const struct hd_model *m, unsigned int *n);

/*
 * The described dump's sampling mean (its sample-bytes=), 0 if it holds
 * every allocation. When not 0, live counts and bytes are estimates and
 * every report says so.
 */
uint64_t hd_model__sample_bytes(const struct hd_model *m);

/*
 * How many of the described dump's live blocks the tracer recorded as
 * samples while it shed load (shed= on their `live` records: -a's
 * --on-full sample), 0: none. When not 0, live counts and bytes are
 * estimates and every report says so.
 */
uint64_t hd_model__shed_blocks(const struct hd_model *m);

/* Are the live counts and bytes estimates (either of the two above)? */
bool hd_model__estimated(const struct hd_model *m);

/*
 * The estimated live bytes' standard error, in bytes (0: exact): the
 * square root of the Horvitz-Thompson variance estimate (sampling.h),
 * so the truth lies within 1.96 of them of the total 95% of the time.
 */
double hd_model__live_stderr(const struct hd_model *m);

/*
 * What one live block of @size bytes, shed at mean @shed (its record's
 * shed=, 0: none), stands for in it, in *@bytes and *@count.
 */
void hd_model__estimate(const struct hd_model *m, uint64_t size, uint64_t shed, uint64_t *bytes,
			double *count);

/*
 * The live set: its stacks with live allocations (with a baseline: whose
 * live values changed), most bytes first (signed), a malloc'ed array of
 * *@n the caller frees; NULL: no memory. Their live_count and live_bytes
 * are the sums.
 */
struct stack **hd_model__live_stacks(struct hd_model *m, size_t *n);
/* The live set's bytes and allocations in all. */
void hd_model__totals(const struct hd_model *m, uint64_t *bytes, uint64_t *count);

/*
 * The whole run. The processes of `proc` records, most peak bytes first,
 * an array valid until the next call or line taken (NULL: no memory).
 */
struct rs_proc **hd_model__procs(struct hd_model *m, size_t *n);
/* Process @pid's last `proc` record, or NULL; its name, or NULL. */
const struct rs_proc *hd_model__proc(const struct hd_model *m, uint32_t pid);
const char *hd_model__comm(const struct hd_model *m, uint32_t pid);
/*
 * The stacks of `stack` records (their whole-run fields the last
 * record's), a malloc'ed array of *@n the caller frees; NULL: no
 * memory. A stack's index in it is its id for hd_model__history().
 */
struct stack **hd_model__run_stacks(struct hd_model *m, size_t *n);
/* The changes of whole-run stack @id's live values, dump by dump (*@n). */
const struct rs_point *hd_model__history(const struct hd_model *m, size_t id, size_t *n);
/* Process @p's live bytes over time (runstats__series). */
struct rs_sample *hd_model__series(const struct rs_proc *p, size_t *n);

/*
 * The join of the live set and the whole run (join.h): each (pid, stack)
 * of either once, with both values, in *@v (*@n entries). Made once,
 * valid until the model takes another line or is freed. Returns 0 or
 * -ENOMEM.
 */
int hd_model__join(struct hd_model *m, const struct hd_joined **v, size_t *n);
/* The processes the join has stacks of, ascending, malloc'ed (*@n); NULL: no memory. */
uint32_t *hd_model__pids(struct hd_model *m, size_t *n);

/*
 * The `map` record of process @pid holding @addr (the baseline's if only
 * it had one); NULL with -e or if none. Valid until the model is freed.
 */
const struct mapping *hd_model__mapping(struct hd_model *m, uint32_t pid, uint64_t addr);
/*
 * Frame @addr of process @pid symbolized through those mappings (or -e's
 * file) into @f, its strings valid until the symbolizer is freed; a
 * frame that is not native code (an interpreter's synthetic address, an
 * address in no mapping but in a JIT range) through the log's `frame`
 * and `jit` records (frametab.h: f->kind set), kept until the model is
 * freed.
 */
void hd_model__lookup(struct hd_model *m, uint32_t pid, uint64_t addr, struct sym_frame *f);
/*
 * Interpreter frames looked up whose `frame` record the log lacks (each
 * once): named "[interpreter frame without its frame record]", for the
 * caller to say.
 */
size_t hd_model__missing_frames(const struct hd_model *m);
/*
 * A frame's short name, as every report that names a frame in a word
 * does: its function (symbolizer.h: no symbol version), else
 * [module+0xOFF] (framefmt__module_off),
 * or [0xADDR] in no mapping; an interpreter's frame its function and
 * where, "handle (server.py:42)"; JIT code its range's name. Into @buf
 * (@cap bytes).
 */
void hd_model__frame_name(const struct sym_frame *f, uint64_t addr, char *buf, size_t cap);

#endif /* HEAPDECODE_MODEL_H */

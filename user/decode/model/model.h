/* SPDX-License-Identifier: MIT */
/*
 * model.h - heapdecode's aggregating modes: read lines holding `~m#`
 * records (and heapsnoop's `map` records), group identical stacks, and
 * write them symbolized as a report or in the folded-stack format that
 * flamegraph.pl, inferno and speedscope read.
 *
 * Memory grows with unique stacks, never with lines. When the input holds
 * several heapsnoop dumps (-i), only one is described, the last or the
 * one --dump names: each dump is a whole live set, and adding them up
 * would count blocks repeatedly. The whole-run records (`proc`, `stack`,
 * `sample`) up to that dump go to a struct runstats (runstats.h).
 */
#ifndef HEAPDECODE_MODEL_H
#define HEAPDECODE_MODEL_H

#include <stdbool.h>
#include <stdio.h>

#include "runstats.h"
#include "symbolizer.h"

struct hd_model;
struct hd_line;

/* What --report groups by: the whole stack, or one key of it. */
enum hd_by { HD_BY_STACK, HD_BY_PID, HD_BY_FUNCTION, HD_BY_MODULE };

struct hd_opts {
	const char *elf;	/* -e: every address is an address of this ELF */
	bool count_values;	/* --folded with allocation counts, not bytes */
	enum hd_by by;		/* --report --by: function and module are those
				 * of frame 0, the call site of the allocator */
	unsigned int dump;	/* --dump: the Nth dump of the input (1: the
				 * first), 0: the last */
	/*
	 * --dump all: called with each dump's live set once it is complete
	 * (at the next dump's header; the last one is the caller's), NULL:
	 * only one dump is described.
	 */
	void (*each_dump)(struct hd_model *r, void *ctx);
	void *ctx;
};

struct hd_model *hd_model__new(const struct hd_opts *opts, struct symbolizer *sym);
void hd_model__free(struct hd_model *r);

/*
 * Take one input line (logread.h). Returns 0, or a negative hs_err for a
 * malformed `~m#` record in it (the caller reports it).
 */
int hd_model__line(struct hd_model *r, const struct hd_line *l);

/*
 * -s: take from @l only what names frames and what the dump says (`map`
 * and `dump` records, exit sections, whole-run records), not its live
 * blocks, for a writer that writes each line as it is read. Returns 0 or
 * a negative hs_err.
 */
int hd_model__follow(struct hd_model *r, const struct hd_line *l);

/*
 * What one live block of @size bytes stands for in the current dump, in
 * *@bytes and *@count: itself, or when the dump is sampled its estimate
 * (livecount.h).
 */
void hd_model__estimate(const struct hd_model *r, uint64_t size, uint64_t *bytes, double *count);

/*
 * --base: subtract @base's live set and whole-run counts (matched by pid
 * and addresses: a dump of the same process) from @r's. Every report then
 * shows differences: growth positive, shrinkage negative. @base must live
 * as long as @r (its mappings name the stacks only it had).
 * Returns 0 or -HS_ENOSPC.
 */
int hd_model__subtract(struct hd_model *r, struct hd_model *base);
/* --count: allocations, not bytes, are the values. */
bool hd_model__counts(const struct hd_model *r);
/* What --by groups by. */
enum hd_by hd_model__by(const struct hd_model *r);
/* Was a baseline subtracted? */
bool hd_model__is_diff(const struct hd_model *r);
/*
 * @v as text in @buf (32 bytes): a count or bytes, or with a baseline
 * subtracted a signed difference ("+5", "-3"). Returns @buf.
 */
const char *hd_model__num(const struct hd_model *r, uint64_t v, char *buf);

/*
 * The described dump's sampling mean (its sample-bytes=), 0 if it holds
 * every allocation. When not 0, live counts and bytes are estimates
 * (livecount.h) and every report says so.
 */
uint64_t hd_model__sample_bytes(const struct hd_model *r);

/* The whole-run records taken in (the reports of hdstats.h). */
struct runstats *hd_model__runstats(struct hd_model *r);
/* How many dumps were taken in (up to the one --dump names). */
unsigned int hd_model__dumps(const struct hd_model *r);

/*
 * Frame @addr of process @pid symbolized through the selected dump's
 * `map` records (or -e): into @f, its strings valid until the symbolizer
 * is freed; frame @k written as --report writes it, each line after
 * @indent.
 */
void hd_model__lookup(struct hd_model *r, uint32_t pid, uint64_t addr, struct sym_frame *f);
void hd_model__write_frame(struct hd_model *r, const char *indent, uint32_t pid, uint32_t k,
			   uint64_t addr, FILE *out);

/*
 * The stacks of the selected live set (with a baseline subtracted: whose
 * live values changed), most bytes first, a malloc'ed array of *@n the
 * caller frees; NULL: no memory.
 */
struct stack **hd_model__live_stacks(struct hd_model *r, size_t *n);
/*
 * The `map` record of process @pid holding @addr (the baseline's if only
 * it had one); NULL with -e or if none. Valid until @r is freed.
 */
const struct mapping *hd_model__mapping(struct hd_model *r, uint32_t pid, uint64_t addr);

/* Write the grouped stacks, biggest first, with totals. */
void hd_model__report(struct hd_model *r, FILE *out);
/* Write `root;...;leaf VALUE` lines, one per unique symbolized stack. */
void hd_model__folded(struct hd_model *r, FILE *out);
/*
 * The same for @n stacks @v (of any table: their pid and frames) with
 * @values (signed with --base; 0: left out), stacks that fold to the same
 * names summed. Returns 0 or -ENOMEM.
 */
int hd_model__folded_values(struct hd_model *r, struct stack *const *v, const uint64_t *values,
			    size_t n, FILE *out);

/* The same stacks as an interactive SVG flame graph; 0, -ENOMEM, -EIO. */
int hd_model__flamegraph(struct hd_model *r, FILE *out, const char *title);

#endif /* HEAPDECODE_MODEL_H */

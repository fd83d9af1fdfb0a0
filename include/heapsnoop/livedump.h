/* SPDX-License-Identifier: MIT */
/*
 * livedump.h - reading a live table (livetable.h) and writing it out as
 * heapsnoop's records (docs/OUTPUT.md): the walk
 * (user/collector/livetable/ltread.c) and the dump (ltdump.c, its lines
 * by ltfmt.c). Shared by the two that
 * read a table: heapsnoop --preload (user/tracer/preload/), which holds
 * every image's table and writes its dumps, and the collector itself,
 * which dumps its own table where no heapsnoop holds it (LD_PRELOAD by
 * hand: at exit, _exit, a fatal signal). Everything here is
 * async-signal-safe: no lock, no malloc, no stdio (snapshots go to mmap'ed
 * memory, lines to a buffer written with write(2)); and everything read
 * from a table is checked against its mapping, since its writer may be
 * broken or hostile (heapprofd's rule for its shared ring).
 */
#ifndef HEAPSNOOP_LIVEDUMP_H
#define HEAPSNOOP_LIVEDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapsnoop/livetable.h"

/* A table mapped at @base, @size bytes, its header checked. */
struct lt_view {
	const char *base;
	uint64_t size;
	const struct lt_header *h;
	uint64_t nslots;		/* entries its region holds */
};

/*
 * Check the header at @base (@size bytes mapped) and fill @v: magic,
 * version, entry size, every region inside the mapping and aligned.
 * Returns 0 or -EINVAL (not a table, or one that lies about itself).
 */
int lt_view__open(struct lt_view *v, const void *base, uint64_t size);

/* The slots handed out so far (acquire), at most the region's. */
uint64_t lt_view__hwm(const struct lt_view *v);

/* One live block, as the walk hands it over. */
struct lt_live {
	uint64_t addr, size;
	const uint64_t *frames;		/* in the mapping; NULL if no stack */
	uint32_t depth;			/* frames, at most LT_MAX_DEPTH */
	uint32_t cut;			/* REC_CUT_* bits of its stack */
	uint32_t stack;			/* its id, 0: none */
	uint32_t tid;
};

/* What a walk met, added to (never reset) by each walk. */
struct lt_walk_stats {
	uint64_t slots;			/* slots looked at */
	uint64_t live;			/* live blocks handed over */
	uint64_t retries;		/* entries read again: they changed while read */
	uint64_t unstable;		/* ... given up on (only while the writer runs) */
	uint64_t linked;		/* a realloc's new entry skipped: the old one still live */
	uint64_t bad_stack;		/* a stack id outside the stacks or uncommitted */
	uint64_t no_stack;		/* stack 0: the writer's stacks were full */
};

/* Called per live block: 0 to go on, else the walk stops with that value. */
typedef int (*lt_live_fn)(void *arg, const struct lt_live *l);

/*
 * Every live entry of slots [@from, @to) (@to 0: to the high-water mark,
 * which also bounds it), each read whole by the seqlock and the realloc
 * link rule (livetable.h), to @fn(@arg, ...). Returns 0 or @fn's value;
 * @st is added to.
 */
int lt_walk(const struct lt_view *v, uint64_t from, uint64_t to, lt_live_fn fn, void *arg,
	    struct lt_walk_stats *st);

/* A module record, copied out whole and terminated. */
struct lt_mod {
	uint64_t start, end, off;
	char build_id[129];
	char path[4096];
};

/*
 * Each committed module record not marked gone, in order, to @fn (0 to
 * go on); the walk stops at the first record that is not whole (the one
 * the writer was writing). Returns 0 or @fn's value.
 */
int lt_modules(const struct lt_view *v, int (*fn)(void *arg, const struct lt_mod *m), void *arg);

/* --- writing records ------------------------------------------------------- */

#define LT_OUT_BUF 32768
/* A deep stack's continuation tokens, " ~m#B[ ~m#C...]", at most. */
#define LT_TAIL_BUF ((LT_MAX_DEPTH + HS_MAX_DEPTH - 1) / HS_MAX_DEPTH * (HS_TOKEN_BUF + 1))

struct lt_snap;
struct lt_item;

/* Lines into a buffer, written to @fd when it fills: no stdio, no malloc. */
struct lt_out {
	int fd;
	int err;			/* the first write's errno that failed, 0 */
	uint64_t lines;			/* lines put so far */
	void (*tick)(void *arg);	/* called every 4096 lines (heapsnoop's socket), or NULL */
	void *tick_arg;
	/*
	 * heapsnoop --preload's, NULL in the collector (lt_out__init()): a
	 * block's stack as written, its interpreter frames named (synthetic
	 * addresses, docs/OUTPUT.md `frame`) into *@depth frames and REC_CUT_*
	 * *@cut, or NULL for the table's own; and the `frame` records a
	 * snapshot's stacks need, put after its `map` lines.
	 */
	const uint64_t *(*xlate)(void *arg, const struct lt_snap *s, const struct lt_item *it,
				 uint32_t *depth, uint32_t *cut);
	void (*names)(void *arg, struct lt_out *o, const struct lt_snap *s);
	void *xarg;
	size_t len;
	char buf[LT_OUT_BUF];
	char tail[LT_TAIL_BUF];		/* the live lines' stack's continuation tokens */
};

void lt_out__init(struct lt_out *o, int fd);
/* @n bytes of whole lines put as they are (records written elsewhere). */
void lt_out__put(struct lt_out *o, const char *s, size_t n);
/* Write what is buffered; returns 0 or -errno (the first failure, kept in o->err). */
int lt_out__flush(struct lt_out *o);

/* One live block of a snapshot. */
struct lt_item {
	uint64_t addr, size;
	const uint64_t *frames;		/* in the table's mapping */
	uint32_t depth, cut, stack;
};

/*
 * A table's live set copied out at one walk, so that a dump's count, its
 * lines and its end agree while the writer goes on: into an mmap'ed
 * array of one item per slot handed out.
 */
struct lt_snap {
	const struct lt_view *v;
	int pid;			/* the process, as the records name it */
	struct lt_item *items;
	uint64_t n;
	uint64_t bytes;			/* live bytes, estimated if sampled */
	size_t map_len;
	struct lt_walk_stats st;
};

/*
 * Copy @v's live set into @s for process @pid. Returns 0, or -ENOMEM
 * (no memory for the copy: @s is empty).
 */
int lt_snap__take(struct lt_snap *s, const struct lt_view *v, int pid);
void lt_snap__free(struct lt_snap *s);

/*
 * One dump of the @n snapshots @s (reason @reason: exit, signal, usr1,
 * interval; every one's table of sample mean @sample): the `dump` line
 * with their totals, every `map` line, every `live` line, `end-dump`.
 * Returns 0 or -errno of the write that failed (o->err).
 */
int lt_out__dump(struct lt_out *o, struct lt_snap *const *s, size_t n, const char *reason,
		 uint64_t sample);

/*
 * @s as an exit section (docs/OUTPUT.md: `exit pid= ... comm=`, its `map`
 * and `live` lines, `end-exit`), @comm its name. Returns as lt_out__dump().
 */
int lt_out__exit(struct lt_out *o, const struct lt_snap *s, const char *comm);

#endif /* HEAPSNOOP_LIVEDUMP_H */

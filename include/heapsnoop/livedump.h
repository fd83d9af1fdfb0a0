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

/*
 * A table as a reader holds it: the image's memfd mapped at @base (@size
 * bytes: the header and the segments placed in it), and each segment of
 * its own that it was handed and mapped (lt_view__attach()). Segment k of
 * region r is r[r].seg[k], NULL where not held.
 */
struct lt_view {
	const char *base;
	uint64_t size;
	const struct lt_header *h;
	struct {
		unsigned int shift;		/* log2 of segment 0's bytes, read once */
		const char *seg[LT_SEGS];
	} r[LT_NREGIONS];
};

/*
 * Check the header at @base (@size bytes mapped) and fill @v: magic,
 * version, entry size, each region's segment 0 size (a power of two,
 * LT_SEG_MIN to LT_SEG_MAX), each segment placed in the mapping inside
 * it and page-aligned. Returns 0, -EPROTO (a table of another version:
 * lt_view__version() names it) or -EINVAL (not a table, or one that
 * lies about itself).
 */
int lt_view__open(struct lt_view *v, const void *base, uint64_t size);

/* The version a table's header at @base (@size bytes) says, 0 if it is no table. */
uint32_t lt_view__version(const void *base, uint64_t size);

/*
 * Segments placed in the mapping since the view was opened (or last
 * refreshed) taken in; each checked as lt_view__open() does (one that
 * does not hold is left out). For a view kept while its writer runs.
 */
void lt_view__refresh(struct lt_view *v);

/* The bytes segment @k of region @r holds. */
uint64_t lt_view__seg_size(const struct lt_view *v, unsigned int r, unsigned int k);

/*
 * Segment @k of region @r, a memfd of its own mapped at @p (@len bytes,
 * at least lt_view__seg_size()), taken into @v. Returns 0, -EINVAL (@r
 * or @k out of range, @len too short) or -EEXIST (held already).
 */
int lt_view__attach(struct lt_view *v, unsigned int r, unsigned int k, const void *p,
		    uint64_t len);

/* Segments the header says are made (acquire) that @v does not hold. */
unsigned int lt_view__missing(const struct lt_view *v);

/* The slots handed out so far (acquire), at most those in the segments held. */
uint64_t lt_view__hwm(const struct lt_view *v);

/*
 * Stack @id whole into @out (LT_MAX_DEPTH words of room): its node's
 * frames, then its parent's, and so on (a JOIN node: its parent's chain,
 * then its word's); *@depth words, *@cut its node's REC_CUT_* bits. Each
 * node committed, inside the stacks reserved and a segment held, its
 * parent's id below its own (no cycle), at most LT_MAX_DEPTH frames in
 * all. Returns 0, or -EINVAL for an id that names no whole stack (0
 * included).
 */
int lt_stack__words(const struct lt_view *v, uint32_t id, uint64_t *out, uint32_t *depth,
		    uint32_t *cut);

/* One node of the stacks' region, as lt_stack__next() finds it. */
struct lt_node {
	uint32_t id;			/* its offset / 8 */
	uint32_t commit;		/* LT_STK_PAD, or LT_STK_OK | ... */
	uint32_t parent;
	uint32_t n;			/* its own words */
	const uint64_t *words;		/* in the mapping (the writer may still be writing: copy first) */
	uint64_t next;			/* the next node's offset */
};

/*
 * The node at offset @off of the stacks' region (8: the first), for a
 * reader that goes through them all in order (a PAD's next is the next
 * segment's start). Returns 1 (*@n filled), 0 if there is none there
 * yet (past the mark, not committed, or in a segment not held), or
 * -EINVAL if it cannot be (its words past its segment, too many).
 */
int lt_stack__next(const struct lt_view *v, uint64_t off, struct lt_node *n);

/* One live block, as the walk hands it over. */
struct lt_live {
	uint64_t addr, size;
	const uint64_t *frames;		/* the walk's copy, during the call; NULL if no stack */
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
	uint64_t bad_stack;		/* a stack id that names no whole stack (lt_stack__words()) */
	uint64_t no_stack;		/* stack 0: the writer's stacks had no room */
};

/* Called per live block: 0 to go on, else the walk stops with that value. */
typedef int (*lt_live_fn)(void *arg, const struct lt_live *l);

/*
 * Every live entry of slots [@from, @to) (@to 0: to the high-water mark,
 * which also bounds it), each read whole by the seqlock and the realloc
 * link rule (livetable.h), its stack rebuilt (lt_stack__words()), to
 * @fn(@arg, ...). Returns 0 or @fn's value; @st is added to. Uses 8 KiB
 * of stack.
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
 * the writer was writing) or in a segment not held. Returns 0 or @fn's
 * value.
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
	 * heapsnoop --preload's, NULL in the collector (lt_out__init()): the
	 * stack @id of @s (its frames @words, *@depth of them, cut bits *@cut)
	 * as written, its interpreter frames named (synthetic addresses,
	 * docs/OUTPUT.md `frame`) into *@depth frames and REC_CUT_* *@cut, or
	 * NULL for the table's own; called once for a run of blocks of one
	 * stack. And the `frame` records a snapshot's stacks need, put after
	 * its `map` lines.
	 */
	const uint64_t *(*xlate)(void *arg, const struct lt_snap *s, uint32_t id,
				 const uint64_t *words, uint32_t *depth, uint32_t *cut);
	void (*names)(void *arg, struct lt_out *o, const struct lt_snap *s);
	void *xarg;
	size_t len;
	char buf[LT_OUT_BUF];
	char tail[LT_TAIL_BUF];		/* the live lines' stack's continuation tokens */
	uint64_t words[LT_MAX_DEPTH];	/* the live lines' stack, rebuilt */
};

void lt_out__init(struct lt_out *o, int fd);
/* @n bytes of whole lines put as they are (records written elsewhere). */
void lt_out__put(struct lt_out *o, const char *s, size_t n);
/* Write what is buffered; returns 0 or -errno (the first failure, kept in o->err). */
int lt_out__flush(struct lt_out *o);

/* One live block of a snapshot: its stack by id (lt_stack__words()). */
struct lt_item {
	uint64_t addr, size;
	uint32_t depth, cut, stack;	/* stack 0: none (depth 0) */
	uint32_t reserved;
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

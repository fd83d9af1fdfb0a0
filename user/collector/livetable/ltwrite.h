/* SPDX-License-Identifier: MIT */
/*
 * ltwrite.h - the writer's side of this process image's live table
 * (include/heapsnoop/livetable.h: the layout and its protocol): the
 * table's memfd and mapping, its segments made as its regions fill,
 * slots handed to threads, and the stores that publish and free an
 * entry, inline for the allocator's path.
 *
 * Every change to the table is a section: the thread's busy count raised,
 * then the control word read; a freeze (fork, the process's own dump)
 * makes the control word non-zero and waits until no thread is busy, so
 * the table is one moment. Sections nest (a stack's capture and interning
 * is one, around the loader's lock that the unwinder and the module
 * records take: a fork while another thread holds it would leave it
 * held in the child, whose every new stack would wait on it for ever);
 * a thread stops for a freeze only at its outermost one. The writers pay a compiler barrier for it,
 * not a fence: the freezer's membarrier(2) fences every running thread
 * (the asymmetric fence of liburcu's membarrier flavour); without
 * membarrier, each section pays a full fence.
 */
#ifndef HEAPSNOOP_COLLECTOR_LTWRITE_H
#define HEAPSNOOP_COLLECTOR_LTWRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "heapsnoop/livedump.h"
#include "heapsnoop/livetable.h"
#include "teststop.h"

#define LT_NO_SLOT UINT32_MAX

/*
 * Each region's segment 0, in the image's memfd with the header; segment
 * k holds these << k, each a memfd of its own. Small, so that a small
 * program's table is small (2.1 MiB of address space, sparse); doubling,
 * so that 2^22 live blocks take 8 segments of entries. LT_SMALL_SEGS (a
 * test build): 4 KiB each, so that a table grows within a few blocks.
 */
#ifdef LT_SMALL_SEGS
#define LT_MOD_SHIFT	12
#define LT_STK_SHIFT	12
#define LT_SLOT_SHIFT	7
#else
#define LT_MOD_SHIFT	16
#define LT_STK_SHIFT	20
#define LT_SLOT_SHIFT	15	/* slots in segment 0 of the entries: 2^15 */
#endif
#define LT_MOD_SEG0	(1ull << LT_MOD_SHIFT)
#define LT_STK_SEG0	(1ull << LT_STK_SHIFT)
#define LT_ENT_SEG0	((uint64_t)sizeof(struct lt_entry) << LT_SLOT_SHIFT)
/* Stack ids are 32 bits of offset / 8: the stacks' region ends at 32 GiB. */
#define LT_STK_END	(8ull << 32)

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* This image's table: set once by livetable__create(), moved by a fork child. */
struct lt_self {
	char *base;			/* the memfd mapped: header, segments 0; NULL: no table */
	uint64_t size;
	struct lt_header *h;
	/* Each segment made, mapped (stored with release, once; a fork child's in place). */
	char *seg[LT_NREGIONS][LT_SEGS];
	uint32_t *next_free[LT_SEGS];	/* private: each free slot's successor, by segment */
	uint64_t max_slots;		/* HEAPSNOOP_TABLE_ENTRIES, else as many as slot numbers allow */
	bool shared;			/* memfds (handed over); else anonymous memory */
	/* heapsnoop's: a segment's memfd handed over before it is used (hello.c); NULL: none */
	int (*handover)(int memfd, unsigned int region, unsigned int k);
};
extern struct lt_self lt;
extern int lt_memfd_err;	/* why the table is not a memfd (errno), 0 */

/* Entry @s (a slot handed out: its segment is made). */
static inline struct lt_entry *lt_entry_at(uint32_t s)
{
	unsigned int k = lt_seg_of(s, LT_SLOT_SHIFT);

	return (struct lt_entry *)__atomic_load_n(&lt.seg[LT_ENT][k], __ATOMIC_RELAXED) +
	       (s - lt_seg_start(k, LT_SLOT_SHIFT));
}

/* Offset @off of region @r (its segment made: lt_made()). */
static inline char *lt_at(unsigned int r, unsigned int shift, uint64_t off)
{
	unsigned int k = lt_seg_of(off, shift);

	return __atomic_load_n(&lt.seg[r][k], __ATOMIC_RELAXED) + (off - lt_seg_start(k, shift));
}

/* Is segment @k of region @r made (acquire)? */
static inline bool lt_made(unsigned int r, unsigned int k)
{
	return k < LT_SEGS && __atomic_load_n(&lt.seg[r][k], __ATOMIC_ACQUIRE);
}

/* Each thread's part: its free slots, its section flag, its registry links. */
struct lt_thread {
	uint32_t head, n;		/* free slots cached, linked through lt_next_free */
	uint64_t bump, bump_end;	/* fresh slots reserved from the high-water mark */
	uint32_t tid;			/* 0: not registered yet */
	int busy;			/* sections entered, not left */
	int freezing;			/* this thread froze the others: its sections go on */
	struct lt_thread *next, *prev;	/* the registry (ltwrite.c's lock) */
	void *altstack;			/* lastdump.c's, where it made one */
};
extern __thread struct lt_thread lt_tls __attribute__((tls_model("initial-exec")));

/*
 * The control word: the count of freezes under way << 1, and bit 0 while
 * a fork child copies the table (forkcopy.c: the parent saves a slot's
 * old entry before its first change). 0: the fast path.
 */
#define LT_CTL_LOGGING 1u
#define LT_CTL_FREEZE 2u
extern uint32_t lt_ctl;
extern bool lt_membarrier;

void lt_section_wait(void);
void forkcopy__save(uint32_t slot);

static inline void lt_section_enter(void)
{
	int b = lt_tls.busy;

	__atomic_store_n(&lt_tls.busy, b + 1, __ATOMIC_RELAXED);
	if (b)
		return;	/* inside one already: any freeze waits for it */
	if (likely(lt_membarrier))
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (unlikely(__atomic_load_n(&lt_ctl, __ATOMIC_RELAXED) >= LT_CTL_FREEZE))
		lt_section_wait();
}

static inline void lt_section_exit(void)
{
	__atomic_store_n(&lt_tls.busy, lt_tls.busy - 1, __ATOMIC_RELEASE);
}

/* Slot @s is about to change: a fork child copying the table needs its old entry. */
static inline void lt_will_change(uint32_t s)
{
	if (unlikely(__atomic_load_n(&lt_ctl, __ATOMIC_RELAXED) & LT_CTL_LOGGING))
		forkcopy__save(s);
}

/*
 * Entry @e (free: even, the caller's alone) made live: its fields, then
 * seq odd with release. The release fence orders the field stores after
 * the store that made it even (its free, maybe by another thread: the
 * slot came through a lock), for a reader that sees a new field.
 */
static inline void lt_entry_publish(struct lt_entry *e, uint64_t addr, uint64_t size,
				    uint32_t stack, uint32_t tid, uint32_t link)
{
	uint32_t q = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->stack, stack, __ATOMIC_RELAXED);
	__atomic_store_n(&e->addr, addr, __ATOMIC_RELAXED);
	__atomic_store_n(&e->size, size, __ATOMIC_RELAXED);
	__atomic_store_n(&e->tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&e->link, link, __ATOMIC_RELAXED);
	if (!link)
		TEST_STOP(1);
	__atomic_store_n(&e->seq, (q + 1) | 1, __ATOMIC_RELEASE);
}

/* Entry @e (live) freed: seq even. */
static inline void lt_entry_free(struct lt_entry *e)
{
	uint32_t q = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if (q & 1)
		__atomic_store_n(&e->seq, q + 1, __ATOMIC_RELEASE);
}

/* A realloc's new entry @e no longer names the block it replaced. */
static inline void lt_entry_unlink(struct lt_entry *e)
{
	__atomic_store_n(&e->link, 0, __ATOMIC_RELEASE);
}

/*
 * A new table for this image: a sealed sparse memfd (or, without memfds,
 * anonymous shared memory, which nobody else can take: lt_memfd_err says
 * why) holding the header and each region's segment 0, mapped into lt;
 * at most @entries live blocks (0: no bound but the slot numbers'),
 * sample mean @sample, name @comm. Returns the memfd (the caller hands
 * it over and closes it), -1 for anonymous memory, or -ENOMEM (no table:
 * nothing is recorded).
 */
int livetable__create(uint64_t entries, uint64_t sample, const char *comm);

/*
 * Region @r's segments up to @k made, in order (each a new sealed memfd,
 * mapped, handed over through lt.handover, then its place stored in the
 * header), each once whoever asks; for the writers, inside a section.
 * Returns 0, or -errno: ENOSPC (@k past the region's last), ENOMEM (no
 * memory or address space: RLIMIT_AS), EDEADLK (this thread is making
 * one already: a signal's allocation), EPERM (a vfork child, another
 * pid than the table's), or the hand-over's (heapsnoop gone); said once
 * per region. What needed it is counted as not
 * recorded by the caller.
 */
int livetable__grow(unsigned int r, unsigned int k);

/*
 * @size bytes of new shared memory mapped at *@map, sparse: a sealed
 * memfd where the table is one (lt.shared), else anonymous: a fork
 * child's copy of the table and of each segment (forkcopy.c), named for
 * @id (LT_MEMFD_TABLE, or a segment's region << 5 | k: livetable.h's
 * LT_MEMFD_NAME). Returns the memfd, -1 for anonymous memory, or -errno.
 */
int livetable__memfd(uint64_t size, unsigned int id, char **map);

/*
 * This image's own table as a reader sees it (the process's own dumps):
 * its memfd's mapping and every segment made. Returns lt_view__open()'s.
 */
int livetable__view(struct lt_view *v);

/* A free slot for the calling thread, LT_NO_SLOT if the table is full. Inside a section. */
uint32_t lt_slot_get(void);
/* Slot @s is free again (inside a section). */
void lt_slot_put(uint32_t s);

/* Register the calling thread (its first tracked call). */
void livetable__thread_start(void);
/* The calling thread is ending: its slots back, out of the registry. */
void livetable__thread_end(void);
/* After fork, in the child: the calling thread is the only one. */
void livetable__forked(void);

/*
 * Stop every other thread's changes: the control word raised, every
 * running thread fenced, each busy thread waited for. @bounded: try the
 * registry's lock and wait for each thread a while only (a dump in a
 * signal handler: a thread stopped by a debugger must not hang an
 * exit); returns false if a thread did not stop. Each freeze is undone by
 * one livetable__thaw(), whatever it returned.
 */
bool livetable__freeze(bool bounded);
void livetable__thaw(void);

#endif /* HEAPSNOOP_COLLECTOR_LTWRITE_H */

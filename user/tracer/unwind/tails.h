/* SPDX-License-Identifier: MIT */
/*
 * tails.h - the stack tails the loader gives threads (include/heapsnoop/
 * event.h's struct hs_tail; docs/DESIGN.md, "Deep stacks copied once"):
 * written into the BPF side's tails map, where the programs check them,
 * and kept here, the last few of each thread, for the records that name
 * them. The loop's thread alone calls these; a tail handed to the
 * unwinding pool is pinned until its job is taken back.
 */
#ifndef HEAPSNOOP_TAILS_H
#define HEAPSNOOP_TAILS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"

/*
 * A thread's tails kept: those records in the ring may still name, and a
 * few it may take again.
 */
#define TAILS_KEEP 16

struct tails;

struct tails_stats {
	uint64_t made;		/* tails kept */
	uint64_t given;		/* ... written for threads (a kept one again too) */
	uint64_t refused;	/* ... not: every kept one still named (tails.c) */
	uint64_t withdrawn;	/* taken back: a stack did not meet its tail */
	uint64_t unknown;	/* records naming a tail not kept: cut there */
	uint64_t forgotten;	/* slots cleared at their process's exit */
};

/*
 * Write the tails into the BPF_F_MMAPABLE array @map_fd (HS_TAIL_SLOTS
 * struct hs_tail), mapped here; @head(@ctx) is the ring buffer producer's
 * position now (stream/ring.h). Returns 0 and *@out, or -errno (mmap's,
 * -ENOMEM).
 */
int tails__open(int map_fd, uint64_t (*head)(void *ctx), void *ctx, struct tails **out);

/*
 * An allocation record of thread @tid of process @pid, of sequence @seq
 * (its ring position + 1), handled in turn, its stack pointer @sp, its
 * stack copied @whole (no tail in place): how the tails it might have
 * named age, how shallow its stacks go, where its tails change.
 */
void tails__note(struct tails *ts, pid_t pid, pid_t tid, uint64_t seq, uint64_t sp,
		 bool whole);

/*
 * Where a tail for thread @tid should start at the lowest: the highest
 * stack pointer of its recent allocations (a tail below it would be
 * returned past by the next shallow one), and above where a tail of it
 * changed lately; 0: not known.
 */
uint64_t tails__hint(struct tails *ts, pid_t pid, pid_t tid);

/*
 * Thread @tid of process @pid's tail @id (a record's hs_user_stack.tail),
 * pinned until tails__unpin(); NULL when it is not kept (the record is
 * then cut where its copy ends: counted).
 */
const struct unwind_tail *tails__find(struct tails *ts, pid_t pid, pid_t tid, uint64_t id);
void tails__unpin(struct tails *ts, const struct unwind_tail *t);

/*
 * Give thread @tid of process @pid the tail @t (unwind_res.built: @ts
 * owns it from now on, and names it, or frees it): the programs check it
 * from the thread's next allocation on. False when it could not be kept
 * (every kept one may still be named: counted): the thread keeps what it
 * had.
 */
bool tails__give(struct tails *ts, pid_t pid, pid_t tid, struct unwind_tail *t);

/* The thread's stack did not meet its tail: none for it until the next. */
void tails__withdraw(struct tails *ts, pid_t pid, pid_t tid);

/*
 * Process @pid ended (its last thread: every record of it is handled or
 * being unwound, pinned): its threads' tails let go, their slots cleared.
 */
void tails__forget(struct tails *ts, pid_t pid);

void tails__stats(const struct tails *ts, struct tails_stats *st);
void tails__free(struct tails *ts);

#endif /* HEAPSNOOP_TAILS_H */

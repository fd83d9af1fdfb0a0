/* SPDX-License-Identifier: MIT */
/*
 * status.h - accounting of what was traced and what was lost: the BPF
 * counters (event.h's enum hs_counter, summed over CPUs) and the user-side
 * trace_stats; the one-line live status on a terminal and the closing
 * report that says plainly whether anything was lost.
 */
#ifndef HEAPSNOOP_STATUS_H
#define HEAPSNOOP_STATUS_H

#include <stdint.h>
#include <stdio.h>

#include "heapsnoop/event.h"
#include "track/trace.h"

struct bpf_map;

/* Sum the per-CPU counters map into @out[HS_CNT__MAX]; 0 or -errno. */
int status__read_counters(const struct bpf_map *counters, uint64_t *out);

/* Events lost among @cnt[HS_CNT__MAX], as status__final() counts them. */
uint64_t status__lost(const uint64_t *cnt);

/* "\r"-refreshed one-line status for a terminal, about once a second. */
void status__line(FILE *tty, struct trace *t, const uint64_t *cnt, double events_per_s);
void status__clear(FILE *tty);

/*
 * The closing accounting to @out. Returns the number of lost events
 * (ring buffer full, missed returns, malformed, out of memory; not a
 * return without an entry, a call made before its probe was attached):
 * 0 means complete, else the exit status says so.
 */
uint64_t status__final(FILE *out, struct trace *t, const uint64_t *cnt);

/*
 * -v: the most bytes, @max_backlog, that the ring buffer of @size bytes
 * held for the loader when it came to read, and what that says of
 * --ringbuf-size (docs/PERFORMANCE.md: a ring that stays in the cache
 * costs less per record; a full one loses records).
 */
void status__backlog(FILE *out, uint64_t max_backlog, uint64_t size);

/*
 * -v: the plain frees that went through the per-CPU logs, @logged, and
 * those that went to the ring buffer instead, @to_ring (a log was full:
 * the loader fell behind; or a program that preempted another on its CPU
 * took the entry first).
 */
void status__free_logs(FILE *out, uint64_t logged, uint64_t to_ring);

/*
 * -v: what the stack tables hold (track/stacktree.h, acct.h): unique
 * stacks, the tree's nodes and frames, the bytes of the nodes, of their
 * index and of the counts beside them, each per unique stack.
 */
void status__stacks(FILE *out, const struct trace *t);

/*
 * --keep-stacks: the stack copies kept for `ustack` records and their
 * bytes, the budget and its peak, and those not kept, by why.
 */
void status__kept(FILE *out, const struct trace *t);

/*
 * --unwind dwarf, for -v: how the stacks ended (complete or why not), how
 * their frames were found, the stack tails (@cnt: the programs' counters,
 * HS_CNT_TAIL_MISS), and the unwind tables' size (unwind.h).
 */
void status__unwind(FILE *out, const struct trace *t, const uint64_t *cnt);

struct hold;

/*
 * --on-full hold: how often and how long the traced processes waited for
 * heapsnoop (attach/hold.h), and @err, the first error holding them
 * (0: none; events may then have been lost, counted above).
 */
void status__hold(FILE *out, const struct hold *h, int err);

#endif /* HEAPSNOOP_STATUS_H */

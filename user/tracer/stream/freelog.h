/* SPDX-License-Identifier: MIT */
/*
 * freelog.h - the plain frees that the BPF side writes to per-CPU logs
 * (struct hs_free_log, heapsnoop/event.h) instead of the ring buffer, put
 * back in the ring buffer's order. Each entry's stamp is the producer's
 * position + 1 when it was written: it belongs before every record at or
 * above stamp - 1 and after every record below (docs/DESIGN.md, "Frees
 * beside the ring").
 *
 * The loader reads the logs before it reads the ring, and reads the ring
 * only up to a limit below which no free can still be missing: the
 * producer's position read before the logs (a free claimed after its log
 * was read has a larger stamp), lowered for an entry claimed but not yet
 * stamped (a program preempted halfway) to the position of the last read
 * before that entry was claimed.
 */
#ifndef HEAPSNOOP_FREELOG_H
#define HEAPSNOOP_FREELOG_H

#include <stdbool.h>
#include <stdint.h>

#include "heapsnoop/event.h"

struct freelog;

/*
 * Map the free_logs map @map_fd (@ncpus struct hs_free_log, one per
 * possible CPU, BPF_F_MMAPABLE) read-write, before any program runs.
 * Returns 0 and *@out, or -errno (mmap's; -ENOMEM).
 */
int freelog__open(int map_fd, unsigned int ncpus, struct freelog **out);

/*
 * Take every stamped entry of every log into the pending frees, ordered
 * by stamp, and give its room back to the programs. @head is the ring
 * buffer producer's position, read just before this call. Returns the
 * limit: ring buffer records at positions below it may be handled now,
 * every free that belongs before one of them being pending.
 */
uint64_t freelog__collect(struct freelog *fl, uint64_t head);

/*
 * The first pending free that belongs before a record of sequence @seq
 * (its position + 1: stamp <= @seq), taken out: true and *@out; false
 * when there is none.
 */
bool freelog__next(struct freelog *fl, uint64_t seq, struct hs_free_entry *out);

/* Entries taken from the logs so far. */
uint64_t freelog__taken(const struct freelog *fl);

void freelog__free(struct freelog *fl);

#endif /* HEAPSNOOP_FREELOG_H */

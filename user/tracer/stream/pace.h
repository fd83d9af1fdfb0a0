/* SPDX-License-Identifier: MIT */
/*
 * pace.h - how long the loader sleeps between two reads of the ring
 * buffer: long enough to cost nothing when the traced processes are
 * quiet, short enough under load that it reads the records while they
 * are still in the cache, well before the ring fills. The BPF programs
 * wake it early only when that fails (a backlog of half the ring).
 *
 * A ring that the producer laps within the cache costs each record less
 * (docs/PERFORMANCE.md, "Where the aims stand"); read every 10 ms with a
 * wakeup at 1/16 full, a small ring made every record pay the wakeup.
 */
#ifndef HEAPSNOOP_PACE_H
#define HEAPSNOOP_PACE_H

#include <stdint.h>

struct pace {
	uint64_t target;	/* bytes to find waiting at a read: 1/8 of the ring */
	uint64_t last_head;	/* the producer's position at the last read */
	double last_t;		/* ... and when, CLOCK_MONOTONIC seconds; 0: no read yet */
	int min_ms, max_ms;
};

/*
 * Pacing for a ring of @size bytes, reads between @min_ms and @max_ms
 * apart (milliseconds, 1 <= min <= max), the first at @max_ms.
 */
void pace__init(struct pace *p, uint64_t size, int min_ms, int max_ms);

/*
 * A read begins at @now (CLOCK_MONOTONIC seconds) with the producer at
 * @head (bytes since the ring's start): the next read's timeout, ms,
 * from the bytes written since the last one.
 */
int pace__next(struct pace *p, uint64_t head, double now);

#endif /* HEAPSNOOP_PACE_H */

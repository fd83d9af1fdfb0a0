/* SPDX-License-Identifier: MIT */
/*
 * creator.h - who created a thread, in the process (docs/DESIGN.md, "Who
 * created a thread"; the BPF tracer's is track/creators.c): the
 * collector's pthread_create takes the stack of the call and hands it to
 * the new thread through a start routine of its own, so that every stack
 * the thread's allocations record goes on, after its own frames, with
 * the boundary (livetable.h's LT_CREATOR_FRAME) and that chain, and the
 * chain of the creating thread's own creator after it, to the first
 * thread.
 */
#ifndef HEAPSNOOP_COLLECTOR_CREATOR_H
#define HEAPSNOOP_COLLECTOR_CREATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "heapsnoop/livetable.h"

/*
 * A thread's creator: the frames of the pthread_create call that made it
 * (pthread_create itself first, then its caller's return address, ...),
 * then, if that thread had a creator, LT_CREATOR_FRAME and its chain;
 * its REC_CUT_* bits (the creator's stack, or a chain cut at
 * CREATOR_MAX_FRAMES). Made by the creating thread with the C library's
 * malloc, of its size (never inside an allocator call), freed when the
 * thread ends.
 */
struct creator {
	void *(*start)(void *);		/* the user's start routine ... */
	void *arg;			/* ... and its argument */
	uint32_t n;			/* frames[] */
	uint32_t cut;			/* REC_CUT_* of the chain */
	uint64_t frames[];
};

/* A chain at most: room is left for the thread's own frames in LT_MAX_DEPTH. */
#define CREATOR_MAX_FRAMES (LT_MAX_DEPTH - 64)

/* The calling thread's creator, while its start routine runs; else NULL. */
extern __thread const struct creator *creator_self __attribute__((tls_model("initial-exec")));

/* Inside the C library's pthread_create, called from the collector's: its frame is there. */
extern __thread int creator_calling __attribute__((tls_model("initial-exec")));

/*
 * Stack @f[@depth] of a thread that creator_self names, or one taken
 * while creator_calling (the collector's pthread_create frame dropped), as captured
 * (localstack__capture(): innermost first, *@cut its REC_CUT_* bits),
 * with the thread's start routine's frame of the collector dropped (the
 * outermost frames that are in the collector's text) and, if it is
 * complete (no cut) and @chain, LT_CREATOR_FRAME and the creator's chain
 * appended in place, at most @room words from @f in all (more: cut=depth, the
 * chain's own cut bits added). Returns the new depth. Allocates nothing.
 */
uint32_t creator__append(uint64_t *f, uint32_t depth, uint32_t room, uint32_t *cut, bool chain);

#endif /* HEAPSNOOP_COLLECTOR_CREATOR_H */

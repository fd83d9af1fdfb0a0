/* SPDX-License-Identifier: MIT */
/*
 * plstate.h - what the preload's interposed functions (preload.c) and its
 * set-up (setup.c) share: whether to track, the sampler's mean and seed,
 * the thread's mark of being inside the collector, the C library's
 * functions found.
 */
#ifndef HEAPSNOOP_COLLECTOR_PLSTATE_H
#define HEAPSNOOP_COLLECTOR_PLSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern int pl_ready;			/* tracking: set up, with a table */
extern uint64_t pl_sample_mean;		/* 0: every allocation */
extern uint64_t pl_seed;
/* Inside the collector: its own allocations go straight to the C library. */
extern __thread int pl_in_hook __attribute__((tls_model("initial-exec")));

/* The C library's allocator functions found (dlsym); true once they are. */
void pl_resolve(void);
bool pl_resolved(void);
/* The C library's malloc and free themselves (the collector's own memory, never tracked). */
void *pl_libc_malloc(size_t n);
void pl_libc_free(void *p);

/* A thread's first change to the table: in the registry, its end heard of. */
void pl_thread_start(void);

#endif /* HEAPSNOOP_COLLECTOR_PLSTATE_H */

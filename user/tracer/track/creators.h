/* SPDX-License-Identifier: MIT */
/*
 * creators.h - who created each thread of a process: thread id -> the
 * frames of its creation (the creating thread's stack in the clone call,
 * unwound from an HS_EV_THREAD record, and after it that thread's own
 * creation, and so on to the first thread), for trace.c to append to each
 * of the thread's stacks after a boundary frame (docs/DESIGN.md, "Who
 * created a thread").
 *
 * Chains are interned: the workers of a pool, made from one call site,
 * share one. An entry stays until its thread id is given to a new thread
 * (which replaces it: a thread id is reused only by a new clone, whose
 * record comes first) or the process ends or execs; at most
 * CREATORS_MAX_THREADS at once, beyond which a new thread's creator is not
 * kept (counted by the caller).
 */
#ifndef HEAPSNOOP_CREATORS_H
#define HEAPSNOOP_CREATORS_H

#include <stddef.h>
#include <stdint.h>

/* Thread ids a process keeps a creator for at most. */
#define CREATORS_MAX_THREADS	(1u << 18)

struct creators;

/* An empty table; NULL: no memory. */
struct creators *creators__new(void);
void creators__free(struct creators *c);

/*
 * Thread @tid was created with the @n @frames (innermost first; at most
 * REC_MAX_DEPTH), whose end is cut as @flags says (stacks.h's
 * STACK_TRUNCATED, STACK_FAULT: 0 when they reach the first thread's
 * start). Replaces what @tid had. Returns 0; -ENOSPC with
 * CREATORS_MAX_THREADS kept already (nothing kept); -EINVAL for n 0;
 * -ENOMEM.
 */
int creators__set(struct creators *c, uint32_t tid, const uint64_t *frames, uint32_t n,
		  uint32_t flags);

/*
 * @tid's creation: its frames and count into *@frames and *@n (valid
 * while the table lives: chains are freed with it), its cut flags into
 * *@flags. Returns
 * 0, or -ENOENT when it has none (a thread made before tracing began,
 * or the main thread).
 */
int creators__get(const struct creators *c, uint32_t tid, const uint64_t **frames, uint32_t *n,
		  uint32_t *flags);

/* Threads with a creator, and distinct chains among them. */
size_t creators__threads(const struct creators *c);
size_t creators__chains(const struct creators *c);

/* Bytes the table holds. */
size_t creators__memory(const struct creators *c);

#endif /* HEAPSNOOP_CREATORS_H */

/* SPDX-License-Identifier: MIT */
/*
 * leakgate.h - heapsnoop as a gate in CI: fail a run whose leaks (what is
 * live at the end, after LSan-style suppressions, suppress.h) exceed a
 * number of bytes, or whose processes' heap peaked above a limit; say
 * which stacks broke it, symbolized. The tracer feeds it the processes
 * it saw (user/tracer/output/tracegate.c), heapdecode its log's
 * (user/decode/analyses/gate.c); the exit statuses are
 * heapsnoop/exit.h's, documented in heapsnoop --help, the README and
 * docs/OUTPUT.md.
 */
#ifndef HEAPSNOOP_LEAKGATE_H
#define HEAPSNOOP_LEAKGATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heapsnoop/exit.h"
#include "stacks.h"
#include "suppress.h"
#include "symbolizer.h"

/* Stacks said in the summary, at most; the rest counted. */
#define LEAKGATE_SAY_STACKS	20

struct leakgate_opts {
	bool fail_on_leak;	/* --fail-on-leak[=BYTES] */
	uint64_t leak_bytes;	/* fail when more than these leak, bytes */
	bool max_peak_set;	/* --max-peak BYTES */
	uint64_t max_peak;	/* fail when a process's peak is above, bytes */
	const char *suppressions;	/* --suppressions FILE, or NULL */
	/*
	 * --no-default-suppressions: the C runtime's own allocations
	 * (suppress__runtime()) counted and reported as the program's;
	 * by default they are left out of the leak gate and reported apart.
	 */
	bool no_default_supp;
};

/*
 * Take the gate option @name (its long name without "--": "fail-on-leak",
 * whose @arg is NULL or BYTES; "suppressions" FILE; "max-peak" BYTES;
 * "no-default-suppressions", no @arg)
 * into @o. Returns 0, or -EINVAL after saying why (msg.h).
 */
int leakgate__option(struct leakgate_opts *o, const char *name, const char *arg);
/* The options together: --suppressions needs --fail-on-leak. 0 or -EINVAL (said). */
int leakgate__check(const struct leakgate_opts *o);
/* Is any gate asked for? */
static inline bool leakgate__wanted(const struct leakgate_opts *o)
{
	return o->fail_on_leak || o->max_peak_set;
}

/* Symbolize return address @addr of process @pid into @f. */
typedef suppress_lookup_fn leakgate_lookup_fn;

struct leakgate;

/*
 * A gate for @o (copied; its suppressions file read now). Returns NULL
 * after saying why (msg.h): no memory, or a bad suppressions file.
 */
struct leakgate *leakgate__new(const struct leakgate_opts *o);
void leakgate__free(struct leakgate *g);

/*
 * Stack @s of process @pid (comm @comm, NULL: unknown) holds
 * @s->live_bytes in @s->live_count blocks at the end (or at its
 * process's exit): its frames symbolized through @lookup, matched
 * against the C runtime's list (unless --no-default-suppressions) and
 * the suppressions, and kept for the summary if none matched.
 * Returns 0 or -ENOMEM.
 */
int leakgate__stack(struct leakgate *g, const struct stack *s, const char *comm,
		    leakgate_lookup_fn lookup, void *ctx);

/* Process @pid (@comm) peaked at @peak bytes in @count blocks. */
void leakgate__peak(struct leakgate *g, uint32_t pid, const char *comm, uint64_t peak,
		    uint64_t count);

/*
 * Say on @out what the gates saw and which stacks or processes broke
 * them. Returns 0 (passed), HS_EXIT_LEAK or HS_EXIT_PEAK (heapsnoop/exit.h).
 */
int leakgate__finish(struct leakgate *g, FILE *out);

#endif /* HEAPSNOOP_LEAKGATE_H */

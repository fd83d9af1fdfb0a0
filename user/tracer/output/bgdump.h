/* SPDX-License-Identifier: MIT */
/*
 * bgdump.h - a dump written in the background: a forked child writes it
 * from its copy-on-write snapshot of every table while the loader goes on
 * reading events (Redis's BGSAVE's way; docs/DESIGN.md, "The consumer
 * never stops"). Meanwhile the loader's own records (exit sections,
 * samples) are held in memory and written after the dump, so the two
 * never interleave.
 *
 * The loader is single-threaded (libbpf, libdw and stdio start no thread),
 * so the child is a whole copy. It runs only the writer it is given, never
 * touches the BPF objects or the ring buffer, ignores SIGINT, SIGTERM and
 * SIGUSR1 (the loader decides), and ends with _exit(): no atexit handler,
 * no stdio buffer flushed twice (the output is flushed before the fork).
 */
#ifndef HEAPSNOOP_BGDUMP_H
#define HEAPSNOOP_BGDUMP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "summary.h"
#include "track/trace.h"

struct bgdump;

/* Its summaries written as @so says (copied). Returns NULL when out of memory. */
struct bgdump *bgdump__new(const struct summary_opts *so);

/* Waits for a dump still running (its held records written), then frees. */
void bgdump__free(struct bgdump *b);

/*
 * A dump of @t (report__dump() with @reason, to @out) and, if @summary,
 * the -s summary of its top @summary stacks (report__summary(), to
 * stderr), written by a child from a snapshot of @t taken now; the parent
 * marks as written what the child writes (report__dump_written()) and goes
 * on. If fork fails, written here instead (said). Returns 0 (started, or
 * written here), -EBUSY (a dump runs already: nothing done; ask again once
 * bgdump__running() is false), or -EIO (written here and writing failed).
 */
int bgdump__dump(struct bgdump *b, struct trace *t, FILE *out, const char *reason,
		 unsigned int summary);

/*
 * The loader's longest stop for a dump so far, ms: the fork (copying the
 * page tables) and the marking, or a whole dump written in the foreground.
 */
double bgdump__longest_ms(const struct bgdump *b);

/* Where the loader writes records now: @out, or the hold while a dump runs. */
FILE *bgdump__out(struct bgdump *b, FILE *out);

bool bgdump__running(const struct bgdump *b);

/*
 * Is @pid a dump writer, running or the last one (with -a its allocations
 * come as events: they are heapsnoop's own, not traced)? A writer's pid is
 * forgotten at bgdump__gone() (its exit event) or the next dump.
 */
bool bgdump__owns(const struct bgdump *b, pid_t pid);
void bgdump__gone(struct bgdump *b, pid_t pid);

/*
 * If the child ended (@wait: once it ends), reap it and write the held
 * records to the output after its dump. Returns 1 if a dump ended and it
 * and the held records were written whole, 0 if none ended, -EIO if
 * writing either failed or the child was killed (said on stderr).
 */
int bgdump__reap(struct bgdump *b, bool wait);

#endif /* HEAPSNOOP_BGDUMP_H */

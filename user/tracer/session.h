/* SPDX-License-Identifier: MIT */
/*
 * session.h - one run of heapsnoop: the target chosen (-p, a command, or
 * every process), the BPF object loaded (bpfload.c) and attached, the
 * ring buffer and, with -a, -p or -f, the kernel's mapping records
 * (session.c); the event loop (dumps, summaries, status line, signals,
 * the launched command's stops, the target's end: loop.c); the shutdown
 * that writes the last dump and the accounting (shutdown.c).
 *
 * The ordering rule lives in loop.c and only there: a process's mapping
 * records (mmaprec.c) are applied before its ring buffer events, since
 * its mmap() and exec() came before its allocations.
 */
#ifndef HEAPSNOOP_SESSION_H
#define HEAPSNOOP_SESSION_H

#include "options.h"

struct agent;
struct session;

/*
 * Everything up to the first traced allocation, for @o: checks, target,
 * output file, BPF load, attachments, the launched command started.
 * Returns the session, or NULL after saying why on standard error.
 */
struct session *session__new(const struct options *o);

/*
 * Trace until the target ends or a signal stops it, then detach and write
 * the final dump, -s's summary and the accounting.
 * Returns the exit status (heapsnoop/exit.h): HS_EXIT_ERROR on an error
 * (reading events, writing records); else HS_EXIT_LOST if any event or
 * mapping record was lost, in every mode, or an image the command exec'd
 * was not traced (execprobe.h); else a CI gate's if one broke (gate.h);
 * else the command's in launch mode (HS_EXIT_SIGNALED if killed), or 0.
 */
int session__run(struct session *s);

/*
 * heapsnoop agent: the loop polls @a's requests and forks its snapshots
 * (agent.h); @a outlives the run. Before session__run().
 */
void session__set_agent(struct session *s, struct agent *a);

/* Detach, close and free all @s holds (its output file too); NULL: nothing. */
void session__free(struct session *s);

#endif /* HEAPSNOOP_SESSION_H */

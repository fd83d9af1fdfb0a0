/* SPDX-License-Identifier: MIT */
/*
 * lastdump.h - the dumps a process writes of its own table where no
 * heapsnoop holds it (LD_PRELOAD by hand, or heapsnoop out of reach):
 * at exit (the library's destructor), in _exit and _Exit, in the handler
 * of a signal that would end it (after the program's own handler, which
 * may recover), on HEAPSNOOP_SIGNAL and every HEAPSNOOP_INTERVAL seconds;
 * each with async-signal-safe code (livedump.h), the other threads held
 * so that it is one moment. What cannot be written is said on standard
 * error. kill -9 cannot be caught: only heapsnoop --preload survives it.
 */
#ifndef HEAPSNOOP_COLLECTOR_LASTDUMP_H
#define HEAPSNOOP_COLLECTOR_LASTDUMP_H

#include <stdbool.h>

/* The process dumps itself (set by lastdump__init()). */
extern bool lastdump_on;

/*
 * Dump from now on: the output (HEAPSNOOP_OUTPUT, %p the pid; else
 * standard error), the handlers of the signals that end a process (where
 * their disposition is the default: an ignored one stays ignored),
 * HEAPSNOOP_SIGNAL's (@sig, 0: none), the interval (@interval_s, 0:
 * none), the main thread's alternate signal stack.
 */
void lastdump__init(int sig, unsigned int interval_s);

/* A thread's first and last tracked call: its alternate signal stack. */
void lastdump__thread_start(void);
void lastdump__thread_end(void);

/* On the allocation path: the interval's dump, if due. */
void lastdump__tick(void);

/* In a fork child: its own output file if the name has %p, its interval from now. */
void lastdump__forked(void);

/*
 * Write one dump now, reason @reason ("exit", "usr1", "interval"); @why
 * names the moment for a message if it cannot be written. @final: the
 * process ends right after (_exit, a fatal signal): the other threads
 * stay held. Async-signal-safe.
 */
void lastdump__write(const char *reason, const char *why, bool final);

/* Where this process's dumps go: a path, or "standard error". */
const char *lastdump__path(void);

/* Found once at set-up: the C library's sigaction, _exit. */
void lastdump__resolve(void);

#endif /* HEAPSNOOP_COLLECTOR_LASTDUMP_H */

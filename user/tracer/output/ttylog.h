/* SPDX-License-Identifier: MIT */
/*
 * ttylog.h - where the records go when no -o is given and standard
 * output is a terminal (issue 32): hundreds of `~m#` lines over the
 * program's own output help nobody. They go to a new file in the current
 * directory, heapsnoop.PROGRAM.PID.heap, created as -o's files are
 * (outfile.h) and never over an existing one (O_EXCL); the terminal gets
 * the summary and the heapdecode commands that read the file. A pipe or a
 * file on standard output gets the records as before.
 */
#ifndef HEAPSNOOP_TTYLOG_H
#define HEAPSNOOP_TTYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "outfile.h"

/* No -o (@output NULL) and standard output a terminal: is a log file wanted? */
bool ttylog__wanted(const char *output);

/*
 * Create the log for the command @argv (NULL: none), process @pid (0:
 * none) or every process (both): heapsnoop.PROGRAM.PID.heap in the
 * current directory, PROGRAM the command's base name, -p's process's
 * comm or "all" (characters other than letters, digits, '.', '_', '+'
 * and '-' made '_'), PID @pid or, for a command or -a, heapsnoop's own;
 * when that exists, .2.heap, .3.heap ... up to .99. Its name into @path
 * (@cap bytes, which must outlive the file). Returns the file (mode
 * 0600, never started: closed unstarted it is removed), or NULL after
 * saying why.
 */
struct outfile *ttylog__create(char *const *argv, pid_t pid, char *path, size_t cap);

/*
 * The run is over: say on @out where the records are and the heapdecode
 * commands that read them (a report, a flame graph of FILE.svg).
 */
void ttylog__next(FILE *out, const char *path);

#endif /* HEAPSNOOP_TTYLOG_H */

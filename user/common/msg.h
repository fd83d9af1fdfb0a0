/* SPDX-License-Identifier: MIT */
/*
 * msg.h - every diagnostic of both programs goes through here: one line
 * on standard error, "PROG: " before it and a newline after it, so that no
 * file writes its own prefix (retsnoop's elog()). Records are not
 * messages: records.c writes them.
 */
#ifndef HEAPSNOOP_MSG_H
#define HEAPSNOOP_MSG_H

#include <stdio.h>

/* The program's name for every message, "heapsnoop" or "heapdecode". */
void msg_init(const char *prog);

/*
 * Write "PROG: " @fmt "\n" to standard error under its lock, flushed (so it
 * lands before anything the traced command writes next). Keeps errno.
 */
__attribute__((format(printf, 1, 2))) void elog(const char *fmt, ...);

/*
 * The same line to @out: a report meant for a person that the caller
 * sends somewhere (the closing accounting, the summary's header).
 */
__attribute__((format(printf, 2, 3))) void flog(FILE *out, const char *fmt, ...);

#endif /* HEAPSNOOP_MSG_H */

/* SPDX-License-Identifier: MIT */
/*
 * libcwatch.h - system-wide mode's probes: one attachment (attach.c, pid -1)
 * per distinct C library file on the system, by (device, inode), found in
 * every process's mappings, those of other mount namespaces included
 * (reached through /proc/PID/root or /proc/PID/map_files), and found again
 * whenever a process maps one not seen yet (a container started later).
 */
#ifndef HEAPSNOOP_LIBCWATCH_H
#define HEAPSNOOP_LIBCWATCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "procmaps.h"

struct heapsnoop_bpf;
struct libc_watch;

/* Returns the watcher or NULL (out of memory). @verbose: say each probe. */
struct libc_watch *libc_watch__new(struct heapsnoop_bpf *skel, bool verbose);
/* Detach every attachment. */
void libc_watch__free(struct libc_watch *w);

/*
 * Attach to the C library of every process running now.
 * Returns the number of libraries probed (> 0), or -ENOENT if none could be.
 */
int libc_watch__scan(struct libc_watch *w);

/*
 * @pid mapped @m (a mmaprec callback, @ctx the watcher): if it is a C
 * library not probed yet, probe it, and say so on standard error.
 */
void libc_watch__on_file(void *ctx, pid_t pid, const struct mapping *m);

/* Libraries probed. */
int libc_watch__count(const struct libc_watch *w);

#endif /* HEAPSNOOP_LIBCWATCH_H */

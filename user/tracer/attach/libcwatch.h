/* SPDX-License-Identifier: MIT */
/*
 * libcwatch.h - the allocator files probed, one attachment (attach.c) per
 * distinct file, by (device, inode): uprobes live on inodes, so a
 * container's or a chroot's copy of the same glibc needs its own, and a
 * library that many processes map needs one. Files are reached through a
 * path that is that very file (/proc/PID/map_files, /proc/PID/root), so
 * other mount namespaces work. System-wide mode (-a) probes every C
 * library found in every process's mappings and each one mapped later;
 * launch mode each image's allocator at its exec (execprobe.c); -p and
 * -f the C libraries their processes map.
 */
#ifndef HEAPSNOOP_LIBCWATCH_H
#define HEAPSNOOP_LIBCWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "maps/procmaps.h"

struct heapsnoop_bpf;
struct libc_watch;
struct link_batch;

/*
 * Returns the watcher or NULL (out of memory). Its probes fire for @pid
 * alone, or with -1 for every process (filtered in BPF). @verbose: each
 * probe's site said (attach.c).
 */
struct libc_watch *libc_watch__new(struct heapsnoop_bpf *skel, pid_t pid, bool verbose);
/*
 * Detach every attachment: their links given to @b (detach.h), or with
 * @b NULL destroyed now, all at once.
 */
void libc_watch__free(struct libc_watch *w, struct link_batch *b);

/*
 * Probe the allocator in the file at @path (reachable from here: the file
 * itself is what counts, by device and inode), unless done before.
 * Returns the number of allocator functions probed in it (> 0), *@fresh
 * saying whether now; or -errno if it cannot be probed (attach.c said
 * why; tried once: later calls return -errno again, silently).
 */
int libc_watch__probe(struct libc_watch *w, const char *path, bool *fresh);

/*
 * @pid maps @m: if it is a C library (by name) not probed yet, probe it
 * through @path (@cap bytes, PATH_MAX: where it was reached). Says
 * nothing. Returns the functions probed now (> 0); 0 (not a C library,
 * or one seen before); -ESRCH if no path reaches it any more (the process
 * has ended, the file is gone: not remembered); or -errno (it cannot be
 * probed: remembered).
 */
int libc_watch__map(struct libc_watch *w, pid_t pid, const struct mapping *m, char *path,
		    size_t cap);

/*
 * -a: attach to the C library of every process running now.
 * Returns the number of libraries probed (> 0), or -ENOENT if none could be.
 */
int libc_watch__scan(struct libc_watch *w);

/*
 * -a: @pid mapped @m (a mmaprec callback, @ctx the watcher): if it is a C
 * library not probed yet, probe it, and say so on standard error.
 */
void libc_watch__on_file(void *ctx, pid_t pid, const struct mapping *m);

/* Files probed. */
int libc_watch__count(const struct libc_watch *w);

#endif /* HEAPSNOOP_LIBCWATCH_H */

/* SPDX-License-Identifier: MIT */
/*
 * procmaps.h - the executable mappings of a live process, read from
 * /proc/PID/maps into a mapping set (mapset.h), with each file's GNU
 * build ID (read through /proc/PID/map_files, so it is the mapped file's
 * even if the path has since been replaced or deleted); the files a
 * process maps, reached from here through /proc; its C library.
 */
#ifndef HEAPSNOOP_PROCMAPS_H
#define HEAPSNOOP_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buildid.h"
#include "mapset.h"

/*
 * Read the executable mappings of @pid: its files' (build IDs through the
 * cache @bc, each file read once), [vdso], and anonymous memory
 * (MAPPING_ANON: JIT code, which the unwinder steps through by frame
 * pointer). Returns 0; -ESRCH if the process is gone; -EACCES; -ENOMEM.
 */
int proc_maps__load(pid_t pid, struct buildid_cache *bc, struct mapset **out);
/* The files and [vdso] only, without build IDs (build_id ""): cheap, for scanning. */
int proc_maps__load_files(pid_t pid, struct mapset **out);

/*
 * A path, reachable from here, to the file @pid maps at @m: the first of
 * /proc/PID/map_files/START-END, /proc/PID/root/PATH and PATH that stat()s
 * as that very file (m->dev, m->ino; any file if m->dev is 0), into @path
 * (@cap bytes; PATH_MAX is enough). Works for other mount namespaces and,
 * through PATH, for a process that has exited.
 * Returns 0 or -ENOENT.
 */
int proc_maps__reach(pid_t pid, const struct mapping *m, char *path, size_t cap);

/*
 * @pid's root directory as seen from here (/proc/PID/root: a chroot's
 * directory) into @root (@cap bytes), "" if it is ours ("/") or cannot be
 * read: what to put before the paths the process names its files by.
 */
void proc_maps__root(pid_t pid, char *root, size_t cap);

/* Fill @m->build_id (a file found by proc_maps__reach, through @bc). */
void proc_maps__build_id(pid_t pid, struct mapping *m, struct buildid_cache *bc);

/* Is @path's file name that of a C library (the names below)? */
bool proc_maps__is_libc(const char *path);

/*
 * Find the mapped file whose name looks like a C library (libc.so.6,
 * libc-2.x.so, libc.musl-*.so.1, ld-musl-*.so.1) and write its path as
 * reachable from here (through /proc/PID/root) into @path.
 * Returns 0 or -ENOENT.
 */
int proc_maps__find_libc(pid_t pid, char *path, size_t cap);

/*
 * Whether @pid maps the file (@dev, @ino) executable: 1 yes, 0 no, or
 * -errno (-ESRCH: no such process).
 */
int proc_maps__maps_file(pid_t pid, dev_t dev, ino_t ino);

/*
 * @pid's main thread's stack, its `[stack]` mapping of /proc/PID/maps:
 * [*@start, *@end). Returns 0, -ESRCH (no such process) or -ENOENT (no
 * such mapping).
 */
int proc_maps__stack(pid_t pid, uint64_t *start, uint64_t *end);

/*
 * @pid's name (/proc/PID/comm, what `ps -o comm` shows: 15 bytes at most)
 * into @buf (@cap bytes, NUL-terminated, no newline). Returns 0, or -errno
 * (-ENOENT: no such process; gone meanwhile).
 */
int proc_maps__comm(pid_t pid, char *buf, size_t cap);

/*
 * Call @fn(pid, @ctx) for each process that /proc lists now (one may end
 * meanwhile: @fn's reads of it then fail). Stops at @fn's first non-zero
 * return and returns it; else 0. -errno if /proc cannot be listed.
 */
int proc_maps__each_pid(int (*fn)(pid_t pid, void *ctx), void *ctx);

#endif /* HEAPSNOOP_PROCMAPS_H */

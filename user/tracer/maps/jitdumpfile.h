/* SPDX-License-Identifier: MIT */
/*
 * jitdumpfile.h - a process's jitdump (jitdump.h), found as perf finds
 * it: the process maps the file it writes executable, so its
 * /proc/PID/maps has an executable mapping of a file named
 * jit-<pid>.dump (its pid, or its pid in its own namespace), wherever
 * the writer put it (node --perf-prof: its working directory). No
 * directory is guessed.
 *
 * The file is the process's, and hostile: opened through the mapping
 * itself (/proc/PID/map_files/START-END: the very file mapped, no path
 * walked) or, where that is not allowed, by its path inside the process's
 * root (openat2 RESOLVE_IN_ROOT, never through a symbolic link) and then
 * only if it is the mapped file (device and inode); only a regular file
 * owned by the process's user, read-only, without blocking; read as it
 * grows (jitdump.c's limits), never written.
 */
#ifndef HEAPSNOOP_JITDUMPFILE_H
#define HEAPSNOOP_JITDUMPFILE_H

#include <stdint.h>
#include <sys/types.h>

#include "jitdump.h"

struct jit_dump_file;

/* @pid's, nothing read yet; NULL: no memory. */
struct jit_dump_file *jit_dump_file__new(pid_t pid);
void jit_dump_file__free(struct jit_dump_file *f);

/*
 * Read what the file gained since the last read; the file is looked for
 * in the process's mappings when it is not open yet and was not looked
 * for less than @retry_ns ago (0: now). Kept open once found: the file
 * stays readable after the process has ended. Returns the LOADs and
 * MOVEs taken; -ENOENT: no jitdump mapped (yet); -EPERM: not a regular
 * file of the process's user, or not the mapped one; -EPROTO: refused
 * (jitdump.h: said once, with why); -ENOMEM.
 */
int jit_dump_file__refresh(struct jit_dump_file *f, uint64_t retry_ns);

/* What was taken (jit_dump__find(), _stats()). */
const struct jit_dump *jit_dump_file__dump(const struct jit_dump_file *f);

/* Has the file been found? */
int jit_dump_file__found(const struct jit_dump_file *f);

#endif /* HEAPSNOOP_JITDUMPFILE_H */

/* SPDX-License-Identifier: MIT */
/*
 * libcfollow.h - -p and -f: a C library that a traced process maps after
 * tracing began (an exec into another root or a container's image, by
 * the process attached to or by a child followed) is probed as the
 * kernel's mapping records name it (mmaprec.h, no trace), one set of
 * probes per file (libcwatch.h). Which processes are traced is told from
 * the same records, in their order: the target, and with -f each process
 * a traced one forks, until it ends (the BPF side's pid_filter forgets a
 * process at its exit, before its records are read). The probes go in
 * once the loader has read the record, while the process runs: what it
 * allocated before is not traced, and each such late probe is said.
 */
#ifndef HEAPSNOOP_LIBCFOLLOW_H
#define HEAPSNOOP_LIBCFOLLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "maps/procmaps.h"

struct libc_watch;
struct libc_follow;

/*
 * Follow @target's (and with @forks, its descendants') C libraries into
 * @w; @held (launch mode's command, or 0) is left to execprobe.c, which
 * probes its images in time. Returns NULL on out of memory.
 */
struct libc_follow *libc_follow__new(struct libc_watch *w, pid_t target, pid_t held, bool forks);
void libc_follow__free(struct libc_follow *f);

/* mmaprec_opts.on_file (@ctx the follower): a traced process's new C library probed. */
void libc_follow__on_file(void *ctx, pid_t pid, const struct mapping *m);
/* mmaprec_opts.on_task: a fork (@ppid) or an end (@ppid 0). */
void libc_follow__on_task(void *ctx, pid_t pid, pid_t ppid);

/* C libraries probed late, or not at all (said as they came). */
uint64_t libc_follow__late(const struct libc_follow *f);

#endif /* HEAPSNOOP_LIBCFOLLOW_H */

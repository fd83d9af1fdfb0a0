/* SPDX-License-Identifier: MIT */
/*
 * umulti.h - multi-uprobe links (BPF_TRACE_UPROBE_MULTI, Linux 6.6): one
 * BPF link puts one program on many offsets of one file, and closing it
 * waits for one grace period in the kernel, where each perf-event uprobe
 * waits for its own under a global mutex (event_mutex): glibc's 17
 * probes took 1.7 s to close on Linux 6.18, their two multi links 0.1 s.
 * A program is loaded for one kind of link or the other
 * (umulti__set_prog), so kfeatures.c chooses before the load; the
 * perf-event uprobes stay for older kernels.
 *
 * libbpf 1.1 (Debian 12's, which the build links) has neither
 * bpf_program__attach_uprobe_multi (libbpf 1.3) nor the link's fields in
 * bpf_link_create_opts, hence the system call made here.
 */
#ifndef HEAPSNOOP_UMULTI_H
#define HEAPSNOOP_UMULTI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;

/*
 * Does the kernel have multi-uprobe links that filter by process (the
 * first ones filtered by thread, fixed in 2024 and in stable kernels)?
 * libbpf's own probe (1.4): a link on "/" is refused for the file (EBADF), and a pid of
 * -1 for the pid (EINVAL) where the filter is the fixed one.
 */
bool umulti__probe(void);

/* Load @prog for multi-uprobe links (before the object's load). */
void umulti__set_prog(struct bpf_program *prog);

/* Was @prog loaded for multi-uprobe links? */
bool umulti__is_prog(const struct bpf_program *prog);

/*
 * Attach loaded @prog to the @n file offsets @offs of the file at @path,
 * as return probes if @ret, firing for process @pid alone (-1: all).
 * Returns the link's file descriptor (close() detaches), or -errno
 * (-ESRCH: no process @pid).
 */
int umulti__attach(const struct bpf_program *prog, const char *path, const uint64_t *offs,
		   uint32_t n, bool ret, pid_t pid);

#endif /* HEAPSNOOP_UMULTI_H */

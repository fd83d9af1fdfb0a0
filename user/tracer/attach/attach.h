/* SPDX-License-Identifier: MIT */
/*
 * attach.h - attach heapsnoop's BPF programs to the allocator functions of
 * one library or executable (libc, jemalloc, a static binary's own malloc)
 * for one process or, with pid -1, every process that maps it.
 */
#ifndef HEAPSNOOP_ATTACH_H
#define HEAPSNOOP_ATTACH_H

#include <stdbool.h>
#include <sys/types.h>

#include "heapsnoop/event.h"

struct heapsnoop_bpf;
struct attachment;
struct link_batch;

/*
 * Attach to the allocator in file @path (as reachable from here) for @pid
 * (-1: all processes). Every function found is probed at the site
 * probesite__find() chooses; with @verbose each choice is printed to stderr.
 * Returns 0; -ENOENT if the file has neither malloc nor free (the message
 * says so), -ENOEXEC if it is not ELF, or the -errno of a failed attach.
 */
int attach__allocator(struct heapsnoop_bpf *skel, const char *path, pid_t pid, bool verbose,
		      struct attachment **out);

/* Number of functions probed. */
int attach__count(const struct attachment *a);

/*
 * Detach everything, every probe at once (detach.h): one grace period's
 * wait in the kernel, not one a probe. A call under way meanwhile may
 * have its entry seen and its return not: it makes no record, as if made
 * after the detach; its block's free, if seen, is a free of a block never
 * seen allocated (counted, as for blocks older than the trace).
 */
void attach__free(struct attachment *a);

/* attach__free(), its links given to @b (detach.h) to be destroyed with others. */
void attach__detach(struct attachment *a, struct link_batch *b);

#endif /* HEAPSNOOP_ATTACH_H */

/* SPDX-License-Identifier: MIT */
/*
 * detach.h - BPF links destroyed together. Closing a multi-uprobe link
 * (umulti.h) waits in the kernel for a grace period (uprobe_unregister_sync:
 * about 0.1 s on Linux 6.18); glibc's probes are ten such links, one a
 * program. Closed from threads at once, their waits share grace periods.
 * Perf-event uprobes (kernels before 6.6) are closed under the kernel's
 * event_mutex, each waiting for its own grace period, at once or not.
 */
#ifndef HEAPSNOOP_DETACH_H
#define HEAPSNOOP_DETACH_H

struct bpf_link;
struct link_batch;

/* An empty batch, or NULL (out of memory: link_batch__add then destroys at once). */
struct link_batch *link_batch__new(void);

/*
 * Give @l (NULL: nothing) to @b, to be destroyed by link_batch__destroy().
 * With @b NULL, or no memory to grow it, @l is destroyed now.
 */
void link_batch__add(struct link_batch *b, struct bpf_link *l);

/* link_batch__add() for a link's file descriptor (umulti.h; -1: nothing). */
void link_batch__add_fd(struct link_batch *b, int fd);

/*
 * Destroy every link of @b at once (one thread each, up to 64; in turn
 * where a thread cannot be started) and free @b; returns when all are
 * closed. NULL: nothing.
 */
void link_batch__destroy(struct link_batch *b);

#endif /* HEAPSNOOP_DETACH_H */

/* SPDX-License-Identifier: MIT */
/*
 * hello.h - this image's table handed to heapsnoop --preload: one
 * datagram (struct lt_hello, include/heapsnoop/livetable.h) to the
 * abstract socket named by HEAPSNOOP_SOCK, with the table's memfd and a
 * pidfd of this process. From the moment it is sent the kernel holds
 * both for heapsnoop, which writes this image's dumps from then on,
 * however the process ends.
 */
#ifndef HEAPSNOOP_COLLECTOR_HELLO_H
#define HEAPSNOOP_COLLECTOR_HELLO_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Read HEAPSNOOP_SOCK and HEAPSNOOP_TOKEN (kept: a program may unset
 * them, a fork child needs them). True if heapsnoop asked for tables.
 */
bool hello__init(void);

/*
 * Send the hello of kind @kind (LT_HELLO_IMAGE, LT_HELLO_FORK; @parent
 * the fork's parent) with @memfd and the @nsegs memfds @segfd of its
 * later segments (@segid: region << 5 | k each; a fork child's copies).
 * Blocks while heapsnoop is behind (a hello is never dropped). Returns 0
 * or -errno: ECONNREFUSED or ENOENT (heapsnoop has ended, or this
 * process is in another network namespace), ENOSYS (no pidfd_open: a
 * kernel before 5.3).
 */
int hello__send(int memfd, int kind, int parent, const int *segfd, const uint8_t *segid,
		unsigned int nsegs);

/*
 * Segment @k of region @r, the memfd @memfd, handed to heapsnoop
 * (LT_HELLO_SEGMENT), before the table uses it: lt.handover. Blocks as
 * hello__send(). Returns 0 or -errno.
 */
int hello__segment(int memfd, unsigned int r, unsigned int k);

/*
 * HEAPSNOOP_AGENT: the path of heapsnoop agent's socket (docs/AGENT.md),
 * read and kept. True if it names one (an absolute path that fits).
 */
bool hello__agent_init(void);

/*
 * This image's table, @memfd, and a pidfd of it, said to the agent (kind
 * @kind, @parent as hello__send()'s) without waiting: its segments the
 * agent finds by their names (livetable.h's LT_MEMFD_NAME). A process
 * under the agent still writes its own dumps. Returns 0 or -errno
 * (ENOENT, ECONNREFUSED: no agent now; EAGAIN: its queue full); either
 * way the agent finds the table when it next looks through /proc.
 */
int hello__agent(int memfd, int kind, int parent);

/* The socket's name, for messages. */
const char *hello__name(void);

#endif /* HEAPSNOOP_COLLECTOR_HELLO_H */

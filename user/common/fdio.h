/* SPDX-License-Identifier: MIT */
/*
 * fdio.h - a buffer written whole to a file descriptor: the one loop the
 * agent's answers and pushes, the preload library's copy and the
 * compressed output file share (a short write goes on from where it
 * stopped, EINTR is retried).
 */
#ifndef HEAPSNOOP_FDIO_H
#define HEAPSNOOP_FDIO_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Write @len bytes of @buf to @fd, on from each short write, EINTR
 * retried. A socket (@sock true) is written by send() with MSG_NOSIGNAL,
 * so a peer gone away is EPIPE, not a SIGPIPE that ends heapsnoop.
 * Returns 0, or -errno (-EIO when a write wrote nothing); how much went
 * out before an error is not said (callers drop the file or connection).
 */
int fd__write_all(int fd, const void *buf, size_t len, bool sock);

#endif

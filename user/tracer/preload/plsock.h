/* SPDX-License-Identifier: MIT */
/*
 * plsock.h - the socket through which every process image that loads
 * the collector hands heapsnoop --preload its live table: an abstract
 * AF_UNIX datagram socket "heapsnoop/PID/RANDOM" that the command and
 * its descendants find by name (HEAPSNOOP_SOCK), and a random token
 * (HEAPSNOOP_TOKEN) each hello must carry. One message per image:
 * struct lt_hello with SCM_RIGHTS [its table's memfd, a pidfd of it, a
 * fork child's segments], and one per segment its table makes later
 * (LT_HELLO_SEGMENT, [its memfd]) (include/heapsnoop/livetable.h; the
 * sender user/collector/hello.c).
 */
#ifndef HEAPSNOOP_PLSOCK_H
#define HEAPSNOOP_PLSOCK_H

#include <stdbool.h>
#include <sys/types.h>

#include "heapsnoop/livetable.h"

struct plsock {
	int fd;
	char name[64];			/* without the abstract name's leading NUL */
	char token[33];			/* 32 hex digits */
};

/* One message taken: its hello, descriptors and sender. */
struct plhello {
	struct lt_hello h;
	int memfd, pidfd;		/* ours to close; -1 in a segment's message */
	int segfd[LT_HELLO_SEGS];	/* h.nsegs of them, ours to close */
	pid_t pid;			/* the sender, in our pid namespace (SCM_CREDENTIALS) */
};

/* Bind a new socket with a fresh token. Returns 0 or -errno (said). */
int plsock__open(struct plsock *s);
void plsock__close(struct plsock *s);

/*
 * Take one pending message without waiting. Returns 1 (a hello or a
 * segment, in *@out), 0 (none pending), -EPROTO (a hello with the token
 * from a collector of another version: out->h.version and out->pid say
 * which), or -EBADMSG: a message refused (not a hello, a wrong token,
 * another user, descriptors missing); the descriptors closed, the
 * caller counts it.
 */
int plsock__recv(struct plsock *s, struct plhello *out);

/* @h's descriptors closed. */
void plhello__close(struct plhello *h);

#endif /* HEAPSNOOP_PLSOCK_H */

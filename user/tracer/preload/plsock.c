// SPDX-License-Identifier: MIT
/*
 * plsock.c - heapsnoop --preload's socket (see plsock.h). Abstract, so
 * nothing is left on disk and every process of the network namespace
 * finds it (a process in another one cannot: its collector says so and
 * writes its own dumps); SO_PASSCRED, so each message carries its
 * sender's pid and uid as the kernel saw them, translated to our pid
 * namespace; the token, so that only the command's processes are taken.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "msg.h"
#include "plsock.h"

int plsock__open(struct plsock *s)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	unsigned char rnd[16];
	int one = 1, err;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		err = -errno;
		elog("cannot draw the collector's token: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < 16; i++)
		snprintf(s->token + 2 * i, 3, "%02x", rnd[i]);
	snprintf(s->name, sizeof(s->name), "heapsnoop/%d/%.8s", (int)getpid(), s->token);
	memcpy(a.sun_path + 1, s->name, strlen(s->name));
	s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
	    bind(s->fd, (struct sockaddr *)&a,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(s->name)))) {
		err = -errno;
		elog("cannot make the socket the collector hands its tables through: %s",
		     strerror(-err));
		if (s->fd >= 0)
			close(s->fd);
		s->fd = -1;
		return err;
	}
	return 0;
}

void plsock__close(struct plsock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void plhello__close(struct plhello *h)
{
	if (h->memfd >= 0)
		close(h->memfd);
	if (h->pidfd >= 0)
		close(h->pidfd);
	for (uint32_t i = 0; i < h->h.nsegs && i < LT_HELLO_SEGS; i++)
		close(h->segfd[i]);
	h->memfd = h->pidfd = -1;
	h->h.nsegs = 0;
}

/* A message of another collector's version: its magic, its version, heapsnoop's token. */
static bool other_version(const struct lt_hello *h, ssize_t n, const struct plsock *s)
{
	return n >= (ssize_t)(offsetof(struct lt_hello, token) + sizeof(h->token)) &&
	       h->magic == LT_HELLO_MAGIC && h->version != LT_VERSION &&
	       !memcmp(h->token, s->token, sizeof(s->token));
}

int plsock__recv(struct plsock *s, struct plhello *out)
{
	union {
		char buf[CMSG_SPACE((2 + LT_HELLO_SEGS) * sizeof(int)) +
			 CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { &out->h, sizeof(out->h) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
			    .msg_controllen = sizeof(c.buf) };
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
	int fds[2 + LT_HELLO_SEGS], nfds = 0, want;
	ssize_t n;

	memset(&out->h, 0, sizeof(out->h));
	out->memfd = out->pidfd = -1;
	n = recvmsg(s->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (int i = 0; i < k && nfds < 2 + LT_HELLO_SEGS; i++)
				memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
		} else if (cm->cmsg_type == SCM_CREDENTIALS &&
			   cm->cmsg_len >= CMSG_LEN(sizeof(cred))) {
			memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
		}
	}
	want = out->h.kind == LT_HELLO_SEGMENT ? 1 :
	       out->h.nsegs <= LT_HELLO_SEGS ? 2 + (int)out->h.nsegs : -1;
	if (other_version(&out->h, n, s) && cred.pid > 0) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		out->h.nsegs = 0;
		out->pid = cred.pid;
		return -EPROTO;
	}
	if (n != sizeof(out->h) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    out->h.magic != LT_HELLO_MAGIC || out->h.version != LT_VERSION ||
	    out->h.nsegs > LT_HELLO_SEGS || (out->h.kind == LT_HELLO_SEGMENT && out->h.nsegs != 1) ||
	    nfds != want || memcmp(out->h.token, s->token, sizeof(s->token)) || cred.pid <= 0 ||
	    (cred.uid != geteuid() && geteuid() != 0)) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		out->h.nsegs = 0;
		return -EBADMSG;
	}
	if (out->h.kind == LT_HELLO_SEGMENT) {
		out->segfd[0] = fds[0];
	} else {
		out->memfd = fds[0];
		out->pidfd = fds[1];
		memcpy(out->segfd, fds + 2, out->h.nsegs * sizeof(int));
	}
	out->pid = cred.pid;
	return 1;
}

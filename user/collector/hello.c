// SPDX-License-Identifier: MIT
/*
 * hello.c - the table handed to heapsnoop (see hello.h). Why a socket
 * and not an inherited descriptor: programs close descriptors they did
 * not open (Python's subprocess closes every one by default, daemons
 * call closefrom), so exec'd children would be lost; an abstract socket
 * is found by name by every process of the network namespace, and
 * heapsnoop checks the token it put in the environment and the sender's
 * credentials (SCM_CREDENTIALS, checked by the kernel). A segment the
 * table makes later is handed over the same way, alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "heapsnoop/env.h"
#include "heapsnoop/livetable.h"
#include "heapsnoop/procstat.h"
#include "hello.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static char sock_name[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char agent_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char token[sizeof(((struct lt_hello *)0)->token)];

bool hello__init(void)
{
	const char *name = getenv(HS_ENV_SOCK), *tok = getenv(HS_ENV_TOKEN);

	if (!name || !*name || strlen(name) >= sizeof(sock_name) - 1)
		return false;
	strcpy(sock_name, name);
	if (tok)
		strncpy(token, tok, sizeof(token) - 1);
	return true;
}

const char *hello__name(void)
{
	return sock_name;
}

/*
 * @h with the @n descriptors @fds to heapsnoop's socket (@agent: the
 * agent's, by its path, never waiting). Returns 0 or -errno.
 */
static int send_to(struct lt_hello *h, const int *fds, unsigned int n, bool agent)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	union {
		char buf[CMSG_SPACE((2 + LT_HELLO_SEGS) * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { h, sizeof(*h) };
	struct msghdr m = { .msg_name = &a, .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = c.buf, .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *cm;
	size_t len = strlen(agent ? agent_path : sock_name);
	int s, err = 0;

	if (!len)
		return -EINVAL;
	if (agent) {
		memcpy(a.sun_path, agent_path, len);	/* a path: the agent's token is none */
		m.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	} else {
		memcpy(a.sun_path + 1, sock_name, len);	/* abstract: a NUL first */
		m.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
		memcpy(h->token, token, sizeof(h->token));
	}
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(c.buf, 0, sizeof(c.buf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	/*
	 * Blocking: a heapsnoop that is behind holds this process up, never
	 * loses it. The agent's never holds it: a hello its queue has no room
	 * for is found by its next look through /proc.
	 */
	while (sendmsg(s, &m, MSG_NOSIGNAL | (agent ? MSG_DONTWAIT : 0)) < 0) {
		if (errno != EINTR) {
			err = -errno;
			break;
		}
	}
	close(s);
	return err;
}

int hello__send(int memfd, int kind, int parent, const int *segfd, const uint8_t *segid,
		unsigned int nsegs)
{
	struct lt_hello h = { .magic = LT_HELLO_MAGIC, .version = LT_VERSION, .kind = (uint32_t)kind,
			      .pid = getpid(), .parent = parent, .nsegs = nsegs };
	int fds[2 + LT_HELLO_SEGS], pidfd, err;

	if (nsegs > LT_HELLO_SEGS)
		return -EINVAL;
	h.start_ticks = procstat__start_ticks("/proc/self/stat");
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		return -errno;
	fds[0] = memfd;
	fds[1] = pidfd;
	memcpy(fds + 2, segfd, nsegs * sizeof(int));
	memcpy(h.segs, segid, nsegs);
	err = send_to(&h, fds, 2 + nsegs, false);
	close(pidfd);
	return err;
}

int hello__segment(int memfd, unsigned int r, unsigned int k)
{
	struct lt_hello h = { .magic = LT_HELLO_MAGIC, .version = LT_VERSION,
			      .kind = LT_HELLO_SEGMENT, .pid = getpid(), .nsegs = 1 };

	h.segs[0] = (uint8_t)(r << 5 | k);
	return send_to(&h, &memfd, 1, false);
}

bool hello__agent_init(void)
{
	const char *path = getenv(HS_ENV_AGENT);

	if (!path || path[0] != '/' || strlen(path) >= sizeof(agent_path))
		return false;
	strcpy(agent_path, path);
	return true;
}

int hello__agent(int memfd, int kind, int parent)
{
	struct lt_hello h = { .magic = LT_HELLO_MAGIC, .version = LT_VERSION, .kind = (uint32_t)kind,
			      .pid = getpid(), .parent = parent };
	int fds[2], err;

	h.start_ticks = procstat__start_ticks("/proc/self/stat");
	fds[0] = memfd;
	fds[1] = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fds[1] < 0)
		return -errno;
	err = send_to(&h, fds, 2, true);
	close(fds[1]);
	return err;
}

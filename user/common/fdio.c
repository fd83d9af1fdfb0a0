// SPDX-License-Identifier: MIT
/* fdio.c - a buffer written whole to a file descriptor (fdio.h). */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"

int fd__write_all(int fd, const void *buf, size_t len, bool sock)
{
	const char *p = buf;

	while (len) {
		ssize_t w = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * carrier.c - the preload collector's carrier forgotten (see carrier.h):
 * heapsnoop --preload (user/tracer/preload.c) hands the program its
 * embedded copy of this library as a sealed memfd (LD_PRELOAD=
 * /proc/self/fd/N, HEAPSNOOP_PRELOAD_FD=N) or, without /proc, as a private
 * file (HEAPSNOOP_PRELOAD_TMP). Once the dynamic loader has mapped it,
 * neither is needed, and the program should see neither: the fd is
 * closed (only if it is that memfd), the file and its directory removed,
 * and its name blanked out of LD_PRELOAD in place, in the strings
 * themselves: a program may read the environment main() was given (bash
 * does), which setenv() never reaches. Programs the command executes run
 * without the collector (heapsnoop says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "carrier.h"
#include "heapsnoop/env.h"

void carrier__forget(void)
{
	char *fd = getenv(HS_ENV_PRELOAD_FD), *tmp = getenv(HS_ENV_PRELOAD_TMP);
	char *pre = getenv("LD_PRELOAD"), drop[4096], link[64], *slash;
	size_t dl;

	if (fd && *fd) {
		int num = atoi(fd);
		ssize_t n;

		snprintf(drop, sizeof(drop), "/proc/self/fd/%d", num);
		n = readlink(drop, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		if (num > 2 && !strncmp(link, "/memfd:libheapsnoop_preload.so", 30))
			close(num);
		fd[0] = '\0';
	} else if (tmp && *tmp) {
		snprintf(drop, sizeof(drop), "%s", tmp);
		unlink(drop);
		slash = strrchr(drop, '/');
		if (slash) {
			*slash = '\0';
			rmdir(drop);
			*slash = '/';
		}
		tmp[0] = '\0';
	} else {
		return;
	}
	/* LD_PRELOAD's entries are separated by colons or spaces (ld.so(8)). */
	dl = strlen(drop);
	while (pre && *pre) {
		size_t len = strcspn(pre, ": ");

		if (len == dl && !strncmp(pre, drop, len))
			memset(pre, ' ', len);
		pre += len;
		pre += strspn(pre, ": ");
	}
}

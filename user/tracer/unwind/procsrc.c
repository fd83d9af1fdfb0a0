// SPDX-License-Identifier: MIT
/* procsrc.c - a live process's module files for the unwinder (see procsrc.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "maps/procmaps.h"
#include "unwind/procsrc.h"

static int proc_open(void *ctx, pid_t pid, const struct mapping *m, int *fd, int *debug_fd)
{
	char path[PATH_MAX];

	(void)ctx;
	*debug_fd = -1;
	if (proc_maps__reach(pid, m, path, sizeof(path)))
		return -ENOENT;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

const struct cfi_src proc_cfi_src = { .open = proc_open };

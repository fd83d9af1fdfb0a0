// SPDX-License-Identifier: MIT
/*
 * outfile.c - output files created safely (see outfile.h). The file is
 * opened at start-up, so a path that cannot be written fails before
 * anything runs, and truncated only by outfile__start(), once the
 * command started (heapsnoop) or the report is ready (heapdecode); a
 * file opened to append is never truncated.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msg.h"
#include "outfile.h"

struct outfile {
	const char *path;
	int fd;
	bool append;	/* never truncated, its mode kept */
	FILE *f;	/* once started */
};

static struct outfile *open_file(const char *path, int flags)
{
	struct outfile *of = calloc(1, sizeof(*of));
	struct stat st;

	if (!of) {
		elog("out of memory");
		return NULL;
	}
	of->path = path;
	of->append = flags & O_APPEND;
	of->fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | flags,
		      0600);
	if (of->fd < 0) {
		if (errno == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			elog("%s is a symbolic link: not written through it (give the file "
			     "it points to, or remove it)", path);
		else
			elog("cannot open %s for writing: %s", path, strerror(errno));
		free(of);
		return NULL;
	}
	return of;
}

struct outfile *outfile__open(const char *path)
{
	return open_file(path, 0);
}

struct outfile *outfile__open_append(const char *path)
{
	return open_file(path, O_APPEND);
}

FILE *outfile__start(struct outfile *of)
{
	struct stat st;

	if (of->f)
		return of->f;
	if (!of->append && fstat(of->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (ftruncate(of->fd, 0) || fchmod(of->fd, 0600))) {
		elog("cannot truncate %s: %s", of->path, strerror(errno));
		return NULL;
	}
	of->f = fdopen(of->fd, "w");
	if (!of->f)
		elog("cannot write %s: %s", of->path, strerror(errno));
	return of->f;
}

int outfile__close(struct outfile *of)
{
	int err = 0;

	if (!of)
		return 0;
	errno = 0;
	if (of->f) {
		if (ferror(of->f) | fclose(of->f)) {
			if (!errno)
				errno = EIO;
			err = -errno;
			elog("writing %s failed: %s", of->path, strerror(errno));
		}
	} else {
		close(of->fd);
	}
	free(of);
	return err;
}

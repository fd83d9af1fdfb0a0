// SPDX-License-Identifier: MIT
/*
 * outfile.c - output files created safely (see outfile.h). The file is
 * opened at start-up, so a path that cannot be written fails before
 * anything runs, and truncated only by outfile__start(), once the
 * command started (heapsnoop) or the report is ready (heapdecode); a
 * file opened to append is never truncated.
 *
 * A compressed file is a stdio stream over a cookie (fopencookie(3))
 * whose every write is one whole zstd frame (ZSTD_compress2()): stdio's
 * buffer, OUT_ZSTD_BUF bytes, makes a frame at most, and each fflush()
 * one more. No state is left between two writes, so a child forked after
 * a flush (a dump written in the background) and its parent each write
 * whole frames, a killed writer leaves whole frames behind, and frames
 * appended (-A) to a file of frames are one stream (RFC 8878: a zstd
 * stream is its frames one after another).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "fdio.h"
#include "msg.h"
#include "outfile.h"

/* stdio's buffer of a compressed file: what one frame holds at most. */
#define OUT_ZSTD_BUF	(4u << 20)
#define OUT_ZSTD_LEVEL	3

struct outfile {
	const char *path;
	int fd;
	bool append;	/* never truncated, its mode kept */
	bool zstd;	/* written compressed (outfile__compress()) */
	bool created;	/* made by outfile__create(): removed if never started */
	FILE *f;	/* once started */
};

/* A compressed file's cookie: its descriptor, stdio's buffer, a frame's room. */
struct zout {
	int fd;
	ZSTD_CCtx *cctx;
	char *text;		/* OUT_ZSTD_BUF bytes: glibc sizes none it does not own */
	char *frame;
	size_t cap;
};

static ssize_t zout_write(void *cookie, const char *buf, size_t n)
{
	struct zout *z = cookie;
	size_t len;
	int err;

	if (ZSTD_compressBound(n) > z->cap) {
		char *v = realloc(z->frame, ZSTD_compressBound(n));

		if (!v) {
			errno = ENOMEM;
			return -1;
		}
		z->frame = v;
		z->cap = ZSTD_compressBound(n);
	}
	len = ZSTD_compress2(z->cctx, z->frame, z->cap, buf, n);
	if (ZSTD_isError(len)) {
		errno = EIO;
		return -1;
	}
	err = fd__write_all(z->fd, z->frame, len, false);
	if (err) {
		errno = -err;
		return -1;
	}
	return (ssize_t)n;
}

static int zout_close(void *cookie)
{
	struct zout *z = cookie;
	int err = close(z->fd);

	ZSTD_freeCCtx(z->cctx);
	free(z->frame);
	free(z->text);
	free(z);
	return err;
}

/* @fd as a stream of zstd frames; NULL (errno set) if out of memory. */
static FILE *zout_open(int fd)
{
	static const cookie_io_functions_t io = { .write = zout_write, .close = zout_close };
	struct zout *z = calloc(1, sizeof(*z));
	FILE *f = NULL;

	if (z) {
		z->fd = fd;
		z->cctx = ZSTD_createCCtx();
		z->text = malloc(OUT_ZSTD_BUF);
	}
	if (z && z->cctx && z->text &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel,
						 OUT_ZSTD_LEVEL)) &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 1)))
		f = fopencookie(z, "w", io);
	if (!f) {
		if (z) {
			ZSTD_freeCCtx(z->cctx);
			free(z->text);
		}
		free(z);
		errno = ENOMEM;
		return NULL;
	}
	setvbuf(f, z->text, _IOFBF, OUT_ZSTD_BUF);
	return f;
}

bool outfile__zstd_name(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && !strcmp(path + n - 4, ".zst");
}

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
	of->created = flags & O_EXCL;
	of->fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | flags,
		      0600);
	if (of->fd < 0) {
		if (errno == EEXIST && (flags & O_EXCL)) {
			free(of);	/* the caller picks another name; free() keeps errno */
			return NULL;
		}
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

struct outfile *outfile__create(const char *path)
{
	return open_file(path, O_EXCL);
}

struct outfile *outfile__open_append(const char *path)
{
	return open_file(path, O_APPEND);
}

void outfile__compress(struct outfile *of)
{
	of->zstd = true;
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
	of->f = of->zstd ? zout_open(of->fd) : fdopen(of->fd, "w");
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
		if (of->created)
			unlink(of->path);
	}
	free(of);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * zread.c - a log's file as text, decompressed when it is zstd (see
 * zread.h): a stdio stream over a cookie (fopencookie(3)) whose reads
 * are ZSTD_decompressStream()'s output, so that every reader of lines or
 * chunks reads it unchanged. A plain file that cannot be read again from
 * its start (a pipe) gets a cookie that gives back the four bytes looked
 * at before the rest.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "input/zread.h"
#include "msg.h"

#define ZSTD_SKIPPABLE_MASK	0xfffffff0u

struct zread {
	FILE *in;
	const char *name;
	ZSTD_DCtx *dctx;	/* NULL: plain text */
	unsigned char *buf;	/* what was read of @in, not given yet */
	size_t cap, pos, len;
	size_t last;		/* ZSTD_decompressStream()'s: 0 at a frame's end */
	bool failed;
};

/* More of @in into the buffer, what is left moved to its start; false at its end. */
static bool refill(struct zread *z)
{
	size_t n;

	memmove(z->buf, z->buf + z->pos, z->len - z->pos);
	z->len -= z->pos;
	z->pos = 0;
	n = fread(z->buf + z->len, 1, z->cap - z->len, z->in);
	z->len += n;
	return n > 0;
}

static ssize_t read_plain(struct zread *z, char *out, size_t size)
{
	size_t n;

	if (z->pos < z->len) {
		n = z->len - z->pos < size ? z->len - z->pos : size;
		memcpy(out, z->buf + z->pos, n);
		z->pos += n;
		return (ssize_t)n;
	}
	n = fread(out, 1, size, z->in);
	if (!n && ferror(z->in)) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)n;
}

static ssize_t read_zstd(struct zread *z, char *out, size_t size)
{
	ZSTD_outBuffer ob = { out, size, 0 };

	if (z->failed) {
		errno = EIO;
		return -1;
	}
	while (!ob.pos) {
		ZSTD_inBuffer ib;

		if (z->pos == z->len && !refill(z)) {
			if (ferror(z->in)) {
				z->failed = true;
				errno = EIO;
				return -1;
			}
			if (z->last) {
				elog("%s: the zstd stream ends inside a frame: the log is cut short "
				     "(its last records are missing)", z->name);
				z->failed = true;
				errno = EIO;
				return -1;
			}
			return 0;
		}
		ib = (ZSTD_inBuffer){ z->buf, z->len, z->pos };
		z->last = ZSTD_decompressStream(z->dctx, &ob, &ib);
		z->pos = ib.pos;
		if (ZSTD_isError(z->last)) {
			elog("%s: not a zstd stream heapdecode can read: %s", z->name,
			     ZSTD_getErrorName(z->last));
			z->failed = true;
			errno = EIO;
			return ob.pos ? (ssize_t)ob.pos : -1;
		}
	}
	return (ssize_t)ob.pos;
}

static ssize_t z_read(void *cookie, char *out, size_t size)
{
	struct zread *z = cookie;

	return z->dctx ? read_zstd(z, out, size) : read_plain(z, out, size);
}

static int z_close(void *cookie)
{
	struct zread *z = cookie;
	int err = 0;

	if (z->in != stdin)
		err = fclose(z->in);
	ZSTD_freeDCtx(z->dctx);
	free(z->buf);
	free(z);
	return err;
}

/* Do the four bytes at @p start a zstd frame, or a skippable one? */
static bool zstd_magic(const unsigned char *p)
{
	uint32_t m = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;

	return m == ZSTD_MAGICNUMBER || (m & ZSTD_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
}

FILE *zread__open(FILE *in, const char *name)
{
	static const cookie_io_functions_t io = { .read = z_read, .close = z_close };
	struct zread *z = calloc(1, sizeof(*z));
	FILE *f;

	if (!z)
		goto nomem;
	z->in = in;
	z->name = name;
	z->cap = ZSTD_DStreamInSize();
	z->buf = malloc(z->cap);
	if (!z->buf)
		goto nomem;
	while (z->len < 4 && refill(z))
		;
	if (z->len >= 4 && zstd_magic(z->buf)) {
		z->dctx = ZSTD_createDCtx();
		if (!z->dctx)
			goto nomem;
	} else if (!fseek(in, 0, SEEK_SET)) {
		/* Plain text read again from its start: no cookie in the way. */
		free(z->buf);
		free(z);
		clearerr(in);
		return in;
	}
	f = fopencookie(z, "r", io);
	if (!f)
		goto nomem;
	return f;
nomem:
	elog("out of memory reading %s", name);
	if (z) {
		ZSTD_freeDCtx(z->dctx);
		free(z->buf);
	}
	free(z);
	return NULL;
}

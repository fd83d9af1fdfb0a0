// SPDX-License-Identifier: MIT
/*
 * outguard.c - heapdecode's outputs never over its inputs or a log, and
 * no silent wait on a terminal (outguard.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapsnoop/exit.h"
#include "msg.h"
#include "outguard.h"

#define SNIFF_BYTES	(64 * 1024)

/* Is @path the file @st is (same device and inode)? */
static bool same_file(const char *path, const struct stat *st)
{
	struct stat s;

	return path && strcmp(path, "-") && !stat(path, &s) && s.st_dev == st->st_dev &&
	       s.st_ino == st->st_ino;
}

/* Do @n bytes at @buf start a zstd frame, or hold a record at a line's start or anywhere? */
static bool looks_like_log(const unsigned char *buf, size_t n)
{
	static const unsigned char zstd_magic[] = { 0x28, 0xb5, 0x2f, 0xfd };

	if (n >= sizeof(zstd_magic) && !memcmp(buf, zstd_magic, sizeof(zstd_magic)))
		return true;
	for (size_t i = 0; i + 3 <= n; i++) {
		if (buf[i] == '~' && buf[i + 1] == 'm' && buf[i + 2] == '#')
			return true;
		if ((i == 0 || buf[i - 1] == '\n') && n - i >= 11 &&
		    !memcmp(buf + i, "heapsnoop: ", 11))
			return true;
	}
	return false;
}

int hd_outguard__output(const char *option, const char *path, char *const *files, int nfiles,
			const char *base)
{
	static unsigned char buf[SNIFF_BYTES];
	struct stat st;
	ssize_t n;
	int fd;

	if (!path || !strcmp(path, "-"))
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;	/* missing, a link, unreadable: outfile.c says what it must */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	for (int i = 0; i < nfiles; i++) {
		if (same_file(files[i], &st)) {
			close(fd);
			elog("--%s %s: that is an input of this run: not written over (name "
			     "another file: heapdecode --%s OUT %s)", option, path, option, path);
			return HD_EXIT_ERROR;
		}
	}
	if (same_file(base, &st)) {
		close(fd);
		elog("--%s %s: that is the --base log: not written over (name another file)",
		     option, path);
		return HD_EXIT_ERROR;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0 && looks_like_log(buf, (size_t)n)) {
		elog("--%s %s: that file holds a heapsnoop log: not written over. Was it "
		     "meant as the input? heapdecode --%s OUT %s (or remove it first)", option,
		     path, option, path);
		return HD_EXIT_ERROR;
	}
	return 0;
}

int hd_outguard__input(int nfiles)
{
	if (nfiles || !isatty(STDIN_FILENO))
		return 0;
	elog("no log to read, and standard input is a terminal: name the log "
	     "(heapdecode [OPTION]... FILE...), pipe it in, or give - to type records "
	     "at the terminal. Try 'heapdecode --help'.");
	return HD_EXIT_ERROR;
}

// SPDX-License-Identifier: MIT
/*
 * preload.c - `heapsnoop --preload` (see preload.h): the collector
 * library found or written out, the environment it reads
 * (user/collector/preload.c, docs/COLLECTOR.md), then execvp. The command
 * keeps heapsnoop's pid, so `kill -USR1` reaches it.
 *
 * The library, first found first used:
 *   $HEAPSNOOP_PRELOAD_LIB                     a file named by the user
 *   libheapsnoop_preload.so beside heapsnoop,  an installed or built pair
 *   or in ../lib/ from it                      (make's build/, make install)
 *   the copy embedded in heapsnoop             built with it, so the one
 *                                              binary is enough
 * A file on disk is named in LD_PRELOAD as it is, and so every program the
 * command execs loads it too. The embedded copy is written to a sealed
 * memfd the command inherits, LD_PRELOAD=/proc/self/fd/N; the collector's
 * constructor closes it (HEAPSNOOP_PRELOAD_FD) and takes the name out of
 * LD_PRELOAD, so the program sees neither, and programs it execs run
 * without the collector (said here). Without /proc or memfds, a private
 * file (a 0700 directory of our own under $TMPDIR or /tmp) that the
 * constructor removes (HEAPSNOOP_PRELOAD_TMP).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msg.h"
#include "preload.h"
#include "preload_blob.h"

#define PRELOAD_LIB "libheapsnoop_preload.so"

/*
 * The collector built with this heapsnoop, for its architecture
 * (HS_PRELOAD_BLOB: the Makefile's debug-stripped copy of
 * libheapsnoop_preload.so), in .rodata.
 */
__asm__(".section .rodata.hs_preload, \"a\"\n"
	".balign 64\n"
	".globl hs_preload_blob\n.hidden hs_preload_blob\n"
	"hs_preload_blob:\n"
	".incbin \"" HS_PRELOAD_BLOB "\"\n"
	".globl hs_preload_blob_end\n.hidden hs_preload_blob_end\n"
	"hs_preload_blob_end:\n"
	".previous\n");
extern const unsigned char hs_preload_blob[] __attribute__((visibility("hidden")));
extern const unsigned char hs_preload_blob_end[] __attribute__((visibility("hidden")));

/* A library on disk: $HEAPSNOOP_PRELOAD_LIB, else beside or ../lib/ from us. */
static int find_lib(char *path, size_t cap)
{
	const char *env = getenv("HEAPSNOOP_PRELOAD_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(path, cap, "%s", env);
		return access(path, R_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(path, cap, "%s/%s", exe, PRELOAD_LIB) < cap && !access(path, R_OK))
		return 0;
	if ((size_t)snprintf(path, cap, "%s/../lib/%s", exe, PRELOAD_LIB) < cap &&
	    !access(path, R_OK))
		return 0;
	return -ENOENT;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The embedded library in a sealed memfd the command inherits: its name
 * through /proc into @path, the fd into *@fd. -errno.
 */
static int embed_memfd(char *path, size_t cap, int *fd)
{
	size_t n = (size_t)(hs_preload_blob_end - hs_preload_blob);
	int err;

	*fd = memfd_create(PRELOAD_LIB, MFD_ALLOW_SEALING);
	if (*fd < 0)
		return -errno;
	err = write_all(*fd, hs_preload_blob, n);
	if (!err && fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL))
		err = -errno;
	snprintf(path, cap, "/proc/self/fd/%d", *fd);
	if (!err && access(path, R_OK))
		err = -errno;	/* no /proc in this mount namespace */
	if (err) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

/* The embedded library as a private file: a 0700 directory, a 0500 file. */
static int embed_file(char *path, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	int fd, err;

	if ((size_t)snprintf(path, cap, "%s/heapsnoop-preload.XXXXXX", tmp && *tmp ? tmp : "/tmp") >= cap)
		return -ENAMETOOLONG;
	if (!mkdtemp(path))
		return -errno;
	strcat(path, "/" PRELOAD_LIB);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	if (fd < 0)
		return -errno;
	err = write_all(fd, hs_preload_blob, (size_t)(hs_preload_blob_end - hs_preload_blob));
	close(fd);
	return err;
}

static int set_num(const char *name, unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	return setenv(name, buf, 1);
}

/* The library for the command into @lib: a file, or the embedded copy. */
static int choose_lib(char *lib, size_t cap)
{
	const char *env = getenv("HEAPSNOOP_PRELOAD_LIB");
	int fd, err = find_lib(lib, cap);

	if (!err)
		return 0;
	if (env && *env) {
		elog("cannot use %s: %s (HEAPSNOOP_PRELOAD_LIB)", lib, strerror(-err));
		return err;
	}
	err = embed_memfd(lib, cap, &fd);
	if (!err)
		return set_num("HEAPSNOOP_PRELOAD_FD", (unsigned long long)fd) ? -errno : 0;
	err = embed_file(lib, cap);
	if (err) {
		elog("cannot write the embedded collector to a memfd or a private file under $TMPDIR"
		     " (%s); set HEAPSNOOP_PRELOAD_LIB to an installed libheapsnoop_preload.so",
		     strerror(-err));
		return err;
	}
	return setenv("HEAPSNOOP_PRELOAD_TMP", lib, 1) ? -errno : 0;
}

int preload__exec(const struct options *o)
{
	char lib[PATH_MAX + sizeof(PRELOAD_LIB) + 1], out[PATH_MAX], pre[2 * PATH_MAX];
	const char *old = getenv("LD_PRELOAD");

	if (choose_lib(lib, sizeof(lib)))
		return 127;
	if (getenv("HEAPSNOOP_PRELOAD_FD") || getenv("HEAPSNOOP_PRELOAD_TMP"))
		elog("note: the collector embedded in heapsnoop follows %s, not the programs it"
		     " executes; for those, install libheapsnoop_preload.so beside heapsnoop or set"
		     " HEAPSNOOP_PRELOAD_LIB", o->argv[0]);
	snprintf(pre, sizeof(pre), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	if (o->output && o->output[0] != '/' && getcwd(out, sizeof(out))) {
		size_t n = strlen(out);

		snprintf(out + n, sizeof(out) - n, "/%s", o->output);
	} else {
		snprintf(out, sizeof(out), "%s", o->output ? o->output : "");
	}
	if (setenv("LD_PRELOAD", pre, 1) ||
	    (o->output && setenv("HEAPSNOOP_OUTPUT", out, 1)) ||
	    (o->interval && set_num("HEAPSNOOP_INTERVAL", o->interval)) ||
	    (o->sample_bytes && set_num("HEAPSNOOP_SAMPLE_BYTES", o->sample_bytes)) ||
	    (o->seed && set_num("HEAPSNOOP_SEED", o->seed)) ||
	    (o->unwind_fp && setenv("HEAPSNOOP_UNWIND", "fp", 1)) ||
	    set_num("HEAPSNOOP_SIGNAL", SIGUSR1)) {
		elog("cannot set the collector's environment: %s", strerror(errno));
		return 127;
	}
	execvp(o->argv[0], o->argv);
	elog("cannot run %s: %s", o->argv[0], strerror(errno));
	return 127;
}

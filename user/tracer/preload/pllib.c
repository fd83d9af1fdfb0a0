// SPDX-License-Identifier: MIT
/*
 * pllib.c - the collector library for `heapsnoop --preload` (see
 * pllib.h): a file on disk, or the copy embedded in heapsnoop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "heapsnoop/env.h"
#include "msg.h"
#include "pllib.h"
#include "preload_blob.h"

#define PRELOAD_LIB "libheapsnoop_preload.so"
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008u
#endif

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
	const char *env = getenv(HS_ENV_PRELOAD_LIB);
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

/*
 * @fd's name through our /proc entry, into @name (@cap bytes): a name the
 * command's processes may open in any root or mount namespace that has
 * the same /proc, as long as we are dumpable (no file capabilities).
 * Returns 0 or -errno (-EPERM: not dumpable; -ENAMETOOLONG; no /proc in
 * this mount namespace: access()'s).
 */
static int name_fd(int fd, char *name, size_t cap)
{
	if (prctl(PR_GET_DUMPABLE) != 1)
		return -EPERM;
	if ((size_t)snprintf(name, cap, "/proc/%d/fd/%d", (int)getpid(), fd) >= cap)
		return -ENAMETOOLONG;
	return access(name, R_OK) ? -errno : 0;
}

/* The embedded library in a sealed memfd, named by name_fd(). */
static int embed_memfd(struct pllib *l)
{
	size_t n = (size_t)(hs_preload_blob_end - hs_preload_blob);
	int fd, err;

	if (prctl(PR_GET_DUMPABLE) != 1)
		return -EPERM;
	/*
	 * Never executed, only mapped by ld.so (which a noexec seal allows):
	 * so vm.memfd_noexec = 2 (6.3) lets it be. Before 6.3: no such flag.
	 */
	fd = memfd_create(PRELOAD_LIB, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create(PRELOAD_LIB, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	err = fd__write_all(fd, hs_preload_blob, n, false);
	if (!err && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL))
		err = -errno;
	if (!err)
		err = name_fd(fd, l->path, sizeof(l->path));
	if (err) {
		close(fd);
		return err;
	}
	l->fd = fd;
	return 0;
}

/*
 * The library found on disk beside heapsnoop: its path first, then the
 * same file opened and named by name_fd(), in one LD_PRELOAD. ld.so maps
 * a file once however it is named (glibc and musl compare the device and
 * inode), so a command that keeps our root and runs as another user loads
 * it by its path, and one that enters another root (chroot, a container)
 * with the same /proc by the descriptor; ld.so says the name that cannot
 * serve "cannot be preloaded ... ignored", once, on the program's standard
 * error (the descriptor's, for another user). Where the descriptor cannot
 * serve here, or both names do not fit, the path alone.
 */
static void open_found(struct pllib *l)
{
	char fdname[64];
	int fd = open(l->path, O_RDONLY | O_CLOEXEC);
	size_t n = strlen(l->path);

	if (fd < 0)
		return;
	if (name_fd(fd, fdname, sizeof(fdname)) ||
	    (size_t)snprintf(l->path + n, sizeof(l->path) - n, ":%s", fdname) >= sizeof(l->path) - n) {
		l->path[n] = '\0';
		close(fd);
		return;
	}
	l->fd = fd;
}

/* The embedded library as a private file: a 0700 directory, a 0500 file. */
static int embed_file(struct pllib *l)
{
	const char *tmp = getenv("TMPDIR");
	int fd, err;

	if ((size_t)snprintf(l->dir, sizeof(l->dir), "%s/heapsnoop-preload.XXXXXX",
			     tmp && *tmp ? tmp : "/tmp") >= sizeof(l->dir))
		return -ENAMETOOLONG;
	if (!mkdtemp(l->dir)) {
		err = -errno;
		l->dir[0] = '\0';
		return err;
	}
	snprintf(l->path, sizeof(l->path), "%s/%s", l->dir, PRELOAD_LIB);
	fd = open(l->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	if (fd < 0)
		return -errno;
	err = fd__write_all(fd, hs_preload_blob, (size_t)(hs_preload_blob_end - hs_preload_blob), false);
	close(fd);
	return err;
}

int pllib__choose(struct pllib *l)
{
	const char *env = getenv(HS_ENV_PRELOAD_LIB);
	int err = find_lib(l->path, sizeof(l->path));

	l->fd = -1;
	l->dir[0] = '\0';
	if (!err && !(env && *env))
		open_found(l);
	if (!err)
		return 0;
	if (env && *env) {
		elog("cannot use %s: %s (HEAPSNOOP_PRELOAD_LIB)", l->path, strerror(-err));
		return err;
	}
	if (!embed_memfd(l))
		return 0;
	err = embed_file(l);
	if (err) {
		elog("cannot write the embedded collector to a memfd or a private file under $TMPDIR"
		     " (%s); set HEAPSNOOP_PRELOAD_LIB to an installed libheapsnoop_preload.so",
		     strerror(-err));
		pllib__cleanup(l);
	}
	return err;
}

void pllib__cleanup(struct pllib *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->dir[0]) {
		char file[PATH_MAX + 32];

		snprintf(file, sizeof(file), "%s/%s", l->dir, PRELOAD_LIB);
		unlink(file);
		rmdir(l->dir);
		l->dir[0] = '\0';
	}
}

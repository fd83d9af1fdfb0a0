/* SPDX-License-Identifier: MIT */
/*
 * pllib.h - the collector library `heapsnoop --preload` names in
 * LD_PRELOAD, first found first used:
 *   $HEAPSNOOP_PRELOAD_LIB                     a file named by the user
 *   libheapsnoop_preload.so beside heapsnoop,  an installed or built pair
 *   or in ../lib/ from it                      (make's build/, make install)
 *   the copy embedded in heapsnoop             built with it, so the one
 *                                              binary is enough
 * The embedded copy goes to a sealed memfd that heapsnoop keeps open
 * while it runs, named /proc/HEAPSNOOP_PID/fd/N: the command inherits no
 * descriptor, and every program it executes finds the library by that
 * name (LD_PRELOAD is inherited) for as long as heapsnoop lives, which
 * is until the last of them ends. Where that name cannot serve (no /proc,
 * or heapsnoop not dumpable: file capabilities), a private directory
 * (0700, under $TMPDIR or /tmp) holds a copy until heapsnoop ends.
 * A copy found beside heapsnoop is named twice, by its path and, opened,
 * the same way (pllib.c's open_found()): a command that enters another
 * root (chroot, a container) with the same /proc reaches it where the
 * host's path means nothing, one run as another user by the path. The
 * user's $HEAPSNOOP_PRELOAD_LIB is passed as given.
 */
#ifndef HEAPSNOOP_PLLIB_H
#define HEAPSNOOP_PLLIB_H

#include <limits.h>
#include <stdbool.h>

struct pllib {
	char path[PATH_MAX + 64];	/* what LD_PRELOAD names: one or two, ':' between */
	int fd;				/* what path names, held open; -1 */
	char dir[PATH_MAX];		/* the private directory made, "" */
};

/* Choose and, for the embedded copy, write the library. Returns 0 or -errno (said). */
int pllib__choose(struct pllib *l);

/* The memfd closed, the private copy and its directory removed. */
void pllib__cleanup(struct pllib *l);

#endif /* HEAPSNOOP_PLLIB_H */

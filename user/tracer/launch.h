/* SPDX-License-Identifier: MIT */
/*
 * launch.h - run a command held before exec, so tracing is attached before
 * its first allocation, and hold it again at exit (ptrace exit stop) while
 * its mappings can still be read.
 */
#ifndef HEAPSNOOP_LAUNCH_H
#define HEAPSNOOP_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;	/* write a byte: the child execs */
	int err_fd;	/* the child's exec errno, or EOF on success */
};

/*
 * Resolve @argv[0] as execvp(3) would into @path, fork a child that waits,
 * and seize it with ptrace for its exit stop. Returns 0 or -errno
 * (-ENOENT: no such command; the message is the caller's to print).
 */
int launch__prepare(char *const argv[], char *path, size_t cap, struct launch *l);

/* Let the child exec. Returns 0, or -errno if exec failed (child reaped). */
int launch__go(struct launch *l);

/* Kill and reap a child that never got to exec. */
void launch__abort(struct launch *l);

/*
 * Handle the child's state changes without blocking. At its exit stop
 * @at_exit is called (drain events, read maps) before it is let go.
 * Returns 1 once the child is gone (*@status as from waitpid), else 0.
 */
int launch__poll(struct launch *l, void (*at_exit)(void *ctx), void *ctx, int *status);

#endif /* HEAPSNOOP_LAUNCH_H */

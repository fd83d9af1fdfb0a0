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
 * -u USER: who the command runs as, all looked up before the fork (the
 * child must not allocate: its allocations would be traced).
 */
struct launch_user {
	uid_t uid;
	gid_t gid;
	gid_t *groups;	/* USER's groups, its primary group first */
	int ngroups;
	char **envp;	/* our environment, HOME, USER, LOGNAME set for USER */
};

/*
 * Look @name (a user name, or a numeric uid) up into @u: its uid, primary
 * and supplementary groups, and the command's environment with HOME,
 * USER and LOGNAME from its passwd entry; asked of getent(1), else read
 * from /etc/passwd and /etc/group, never through the C library's NSS
 * (userdb.c). Returns 0, or -errno after saying why (msg.h: no such
 * user, out of memory).
 */
int launch_user__init(struct launch_user *u, const char *name);
void launch_user__free(struct launch_user *u);

/*
 * Resolve @argv[0] as execvp(3) would into @path, fork a child that waits,
 * and seize it with ptrace for its exit stop. With @user (not NULL) the
 * child takes USER's groups, gid and uid, then execs with @user->envp.
 * Returns 0 or -errno (-ENOENT: no such command; the message is the
 * caller's to print).
 */
int launch__prepare(char *const argv[], char *path, size_t cap, const struct launch_user *user,
		    struct launch *l);

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

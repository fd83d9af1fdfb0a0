/* SPDX-License-Identifier: MIT */
/*
 * launch.h - run a command held before exec and follow it with ptrace:
 * at each exec (its image replaced, the new one's loader not run yet),
 * optionally at the system calls that follow (the dynamic loader's, until
 * the caller has found what it waits for), and at its exit, while its
 * mappings can still be read. Signals and group stops pass through.
 */
#ifndef HEAPSNOOP_LAUNCH_H
#define HEAPSNOOP_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;	/* write a byte: the child execs */
	int err_fd;	/* the child's exec errno, or EOF on success */
	int wake_fd;	/* readable when the child may have stopped (SIGCHLD) */
	bool walking;	/* stopped at its system calls (PTRACE_SYSCALL) */
	bool verbose;	/* say its group stops */
};

/* A system call's entry or exit (PTRACE_GET_SYSCALL_INFO, Linux 5.3). */
struct launch_syscall {
	bool entry;		/* else its exit */
	uint64_t ip;		/* the instruction after the system call */
	uint64_t nr, args[6];	/* entry: the call (<sys/syscall.h>) */
	int64_t rval;		/* exit: its result, or -errno ... */
	bool is_error;		/* ... if this is set */
};

/* What launch__poll() calls at the child's stops; any may be NULL. */
struct launch_hooks {
	/*
	 * The child's exec stop: the new image and its dynamic loader are
	 * mapped, nothing of them has run. True: stop at its system calls
	 * (at_syscall) from now on.
	 */
	bool (*at_exec)(void *ctx, pid_t pid);
	/*
	 * A system call's entry or exit while asked: true to go on stopping.
	 * @sc NULL: what it is cannot be read (PTRACE_GET_SYSCALL_INFO fails).
	 */
	bool (*at_syscall)(void *ctx, pid_t pid, const struct launch_syscall *sc);
	/* The child's exit stop: every event it sent is in; its maps readable. */
	void (*at_exit)(void *ctx);
	void *ctx;
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
 * Resolve command @cmd as execvp(3) would into @path (@cap bytes).
 * Returns 0 or -errno (-ENOENT: no such command).
 */
int launch__resolve(const char *cmd, char *path, size_t cap);

/*
 * Resolve @argv[0] as execvp(3) would into @path, fork a child that waits,
 * and seize it with ptrace for its exec and exit stops. With @user (not
 * NULL) the child takes USER's groups, gid and uid, then execs with
 * @user->envp. Returns 0 or -errno (-ENOENT: no such command; the message
 * is the caller's to print).
 */
int launch__prepare(char *const argv[], char *path, size_t cap, const struct launch_user *user,
		    struct launch *l);

/* Let the child exec. Returns 0, or -errno if exec failed (child reaped). */
int launch__go(struct launch *l);

/* Kill and reap a child that never got to exec. */
void launch__abort(struct launch *l);

/*
 * Handle the child's state changes without blocking: each stop is given
 * to @h's hook for it, then the child let go (signals delivered, a group
 * stop kept). Poll @l->wake_fd to know when to call it again.
 * Returns 1 once the child is gone (*@status as from waitpid), else 0.
 */
int launch__poll(struct launch *l, const struct launch_hooks *h, int *status);

#endif /* HEAPSNOOP_LAUNCH_H */

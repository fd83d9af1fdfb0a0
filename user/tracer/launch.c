// SPDX-License-Identifier: MIT
/*
 * launch.c - held launch and exit stop (see launch.h). Between fork and
 * exec the child only read()s, sets its credentials (-u, looked up before
 * the fork) and execs: nothing it does there allocates, so no allocation
 * of heapsnoop's own image is ever traced.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "msg.h"

static bool is_exec_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static int resolve(const char *cmd, char *path, size_t cap)
{
	const char *env = getenv("PATH");
	char *dirs, *save = NULL;

	if (strchr(cmd, '/')) {
		snprintf(path, cap, "%s", cmd);
		return is_exec_file(path) ? 0 : -errno ? -errno : -EACCES;
	}
	dirs = strdup(env ? env : "/usr/local/bin:/usr/bin:/bin");
	if (!dirs)
		return -ENOMEM;
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(path, cap, "%s/%s", *d ? d : ".", cmd);
		if (is_exec_file(path)) {
			free(dirs);
			return 0;
		}
	}
	free(dirs);
	return -ENOENT;
}

/* In the child, before exec: USER's groups, gid, uid (in that order). */
static int become(const struct launch_user *u)
{
	if (setgroups((size_t)u->ngroups, u->groups) || setgid(u->gid) || setuid(u->uid))
		return errno;
	return 0;
}

int launch__prepare(char *const argv[], char *path, size_t cap, const struct launch_user *user,
		    struct launch *l)
{
	int go[2], er[2], err;

	err = resolve(argv[0], path, cap);
	if (err)
		return err;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(er, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		close(go[0]); close(go[1]); close(er[0]); close(er[1]);
		return err;
	}
	if (l->pid == 0) {
		char c;

		close(go[1]);
		close(er[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* heapsnoop went away */
		err = user ? become(user) : 0;
		if (!err) {
			if (user)
				execve(path, argv, user->envp);
			else
				execv(path, argv);
			err = errno;
		}
		if (write(er[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	l->go_fd = go[1];
	l->err_fd = er[0];
	/* Only for the exit stop: signals are passed on untouched. */
	if (ptrace(PTRACE_SEIZE, l->pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT)) {
		err = -errno;
		launch__abort(l);
		return err;
	}
	return 0;
}

int launch__go(struct launch *l)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1)
		return -errno;
	close(l->go_fd);
	l->go_fd = -1;
	/* EOF once exec succeeded (the pipe is close-on-exec). */
	do {
		n = read(l->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(e)) {
		int st;

		while (waitpid(l->pid, &st, __WALL) < 0 && errno == EINTR)
			;
		return -e;
	}
	return 0;
}

void launch__abort(struct launch *l)
{
	int st;

	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	kill(l->pid, SIGKILL);
	waitpid(l->pid, &st, __WALL);
}

int launch__poll(struct launch *l, void (*at_exit)(void *ctx), void *ctx, int *status)
{
	int st;
	pid_t r;

	while ((r = waitpid(l->pid, &st, WNOHANG | __WALL)) > 0) {
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*status = st;
			return 1;
		}
		if (!WIFSTOPPED(st))
			continue;
		switch (st >> 16) {
		case PTRACE_EVENT_EXIT:
			if (at_exit)
				at_exit(ctx);
			ptrace(PTRACE_CONT, l->pid, NULL, NULL);
			break;
		case PTRACE_EVENT_STOP:
			/* A group stop (SIGSTOP, SIGTSTP): stay stopped. */
			ptrace(PTRACE_LISTEN, l->pid, NULL, NULL);
			break;
		default:
			/* A signal on its way to the child: deliver it. */
			ptrace(PTRACE_CONT, l->pid, NULL, (void *)(long)WSTOPSIG(st));
			break;
		}
	}
	if (r < 0 && errno == ECHILD) {
		*status = 0;
		return 1;
	}
	return 0;
}

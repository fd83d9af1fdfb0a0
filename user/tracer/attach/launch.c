// SPDX-License-Identifier: MIT
/*
 * launch.c - held launch and exit stop (see launch.h). Between fork and
 * exec the child only read()s, sets its credentials (-u, looked up before
 * the fork) and execs: nothing it does there allocates, so no allocation
 * of heapsnoop's own image is ever traced.
 *
 * ptrace is used as little as it can be: the one launched process,
 * seized (PTRACE_SEIZE: no SIGSTOP sent, group stops seen as such) with
 * PTRACE_O_TRACEEXEC (each new image, before its loader runs: its
 * allocator is probed there), PTRACE_O_TRACEEXIT (its mappings read while
 * they exist) and PTRACE_O_TRACESYSGOOD (system-call stops told apart
 * from SIGTRAP); system-call stops only while the caller asks (the
 * dynamic loader's few dozen calls after an exec, PTRACE_SYSCALL and
 * PTRACE_GET_SYSCALL_INFO, Linux 5.3). Not PTRACE_O_TRACEFORK/VFORK/CLONE:
 * every child and thread would be stopped at birth and held by heapsnoop,
 * none could be traced by gdb or strace, a sandbox or debugger the command
 * runs would fail to attach, and a thread's exec would be ours to sort
 * out; -f follows children by the kernel's mapping records instead
 * (docs/DESIGN.md, "Launch mode"). Signals are delivered as they come.
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

#include "heapsnoop/exit.h"
#include "launch.h"
#include "msg.h"

static bool is_exec_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int launch__resolve(const char *cmd, char *path, size_t cap)
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

/* The write end of the wake pipe, for the SIGCHLD handler. */
static int wake_wr = -1;

static void on_chld(int sig)
{
	int e = errno;

	(void)sig;
	if (write(wake_wr, "c", 1) < 0) {
		/* Full: a wakeup is pending already. */
	}
	errno = e;
}

/*
 * The tracer gets SIGCHLD at each of the child's stops: a byte in a pipe
 * the event loop polls, so a stop is handled at once, not at the loop's
 * next timeout (the dynamic loader's system calls are dozens of stops).
 */
static int wake_init(struct launch *l)
{
	struct sigaction sa = { .sa_handler = on_chld, .sa_flags = SA_RESTART };
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	wake_wr = p[1];
	l->wake_fd = p[0];
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL))
		return -errno;
	return 0;
}

int launch__prepare(char *const argv[], char *path, size_t cap, const struct launch_user *user,
		    struct launch *l)
{
	int go[2], er[2], err;

	err = launch__resolve(argv[0], path, cap);
	if (err)
		return err;
	l->walking = false;
	if (l->wake_fd < 0 && (err = wake_init(l)))
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
			_exit(HS_EXIT_NOEXEC);	/* heapsnoop went away */
		err = user ? become(user) : 0;
		if (!err) {
			if (user)
				execve(path, argv, user->envp);
			else
				execv(path, argv);
			err = errno;
		}
		if (write(er[1], &err, sizeof(err)) < 0)
			_exit(HS_EXIT_NOEXEC);
		_exit(HS_EXIT_NOEXEC);
	}
	close(go[0]);
	close(er[1]);
	l->go_fd = go[1];
	l->err_fd = er[0];
	/* Exec and exit stops (see the top): signals are passed on untouched. */
	if (ptrace(PTRACE_SEIZE, l->pid, NULL, (void *)(long)(PTRACE_O_TRACEEXEC |
	    PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD))) {
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

static const char *stop_name(int sig)
{
	switch (sig) {
	case SIGSTOP: return "SIGSTOP";
	case SIGTSTP: return "SIGTSTP";
	case SIGTTIN: return "SIGTTIN";
	case SIGTTOU: return "SIGTTOU";
	default: return "a stop signal";
	}
}

/* Let the child go on, stopping at its system calls while walking. */
static void resume(struct launch *l, int sig)
{
	ptrace(l->walking ? PTRACE_SYSCALL : PTRACE_CONT, l->pid, NULL, (void *)(long)sig);
}

/* A system-call stop: what it is, to the hook; false: stop walking. */
static bool syscall_stop(struct launch *l, const struct launch_hooks *h)
{
	struct __ptrace_syscall_info si;
	struct launch_syscall sc = { 0 };

	if (ptrace(PTRACE_GET_SYSCALL_INFO, l->pid, (void *)sizeof(si), &si) <= 0)
		return h->at_syscall && h->at_syscall(h->ctx, l->pid, NULL);	/* before 5.3 */
	if (si.op != PTRACE_SYSCALL_INFO_ENTRY && si.op != PTRACE_SYSCALL_INFO_EXIT)
		return true;	/* nothing to tell: go on */
	sc.entry = si.op == PTRACE_SYSCALL_INFO_ENTRY;
	sc.ip = si.instruction_pointer;
	if (sc.entry) {
		sc.nr = si.entry.nr;
		memcpy(sc.args, si.entry.args, sizeof(sc.args));
	} else {
		sc.rval = si.exit.rval;
		sc.is_error = si.exit.is_error;
	}
	return h->at_syscall && h->at_syscall(h->ctx, l->pid, &sc);
}

int launch__poll(struct launch *l, const struct launch_hooks *h, int *status)
{
	char buf[64];
	int st;
	pid_t r;

	while (read(l->wake_fd, buf, sizeof(buf)) > 0)
		;
	while ((r = waitpid(l->pid, &st, WNOHANG | __WALL)) > 0) {
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*status = st;
			return 1;
		}
		if (!WIFSTOPPED(st))
			continue;
		switch (st >> 16) {
		case PTRACE_EVENT_EXEC:
			l->walking = h->at_exec && h->at_exec(h->ctx, l->pid);
			resume(l, 0);
			break;
		case PTRACE_EVENT_EXIT:
			l->walking = false;
			if (h->at_exit)
				h->at_exit(h->ctx);
			resume(l, 0);
			break;
		case PTRACE_EVENT_STOP:
			/*
			 * A group stop (SIGSTOP, SIGTSTP...): stay stopped, seen.
			 * Its end (SIGCONT) traps once more, with SIGTRAP: go on
			 * (listening again kept the command stopped for good).
			 */
			if (WSTOPSIG(st) == SIGTRAP) {
				resume(l, 0);
				break;
			}
			if (l->verbose)
				elog("pid %d is stopped (%s): it stays so until SIGCONT",
				     l->pid, stop_name(WSTOPSIG(st)));
			ptrace(PTRACE_LISTEN, l->pid, NULL, NULL);
			break;
		default:
			if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
				l->walking = syscall_stop(l, h);
				resume(l, 0);
				break;
			}
			/* A signal on its way to the child: deliver it. */
			resume(l, WSTOPSIG(st));
			break;
		}
	}
	if (r < 0 && errno == ECHILD) {
		*status = 0;
		return 1;
	}
	return 0;
}

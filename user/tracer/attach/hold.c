// SPDX-License-Identifier: MIT
/*
 * hold.c - the traced processes held by the cgroup v2 freezer (see
 * hold.h). The cgroup interface is the kernel's
 * (Documentation/admin-guide/cgroup-v2.rst: cgroup.procs, cgroup.freeze);
 * the cgroup2 mount is found in /proc/self/mountinfo, the target's cgroup
 * in /proc/PID/cgroup ("0::PATH").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hold.h"

struct hold {
	char dir[PATH_MAX];	/* heapsnoop's cgroup */
	char orig[PATH_MAX];	/* the one the target came from */
	int freeze_fd;		/* dir/cgroup.freeze */
	pid_t guard;
	int guard_fd;		/* its pipe's write end: "x" says all is done */
	pthread_mutex_t lock;
	bool held;
	uint64_t since;		/* CLOCK_MONOTONIC ns of the hold under way */
	struct hold_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Write @s to @path (a cgroup file); 0 or -errno. */
static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	size_t n = strlen(s);

	if (fd < 0)
		return -errno;
	if (write(fd, s, n) != (ssize_t)n)
		err = -errno;
	close(fd);
	return err;
}

/*
 * The cgroup2 mount: its mount point into @mnt and the cgroup it shows as
 * its root into @root (mountinfo's fourth field: "/" but in a container
 * that sees part of the tree). 0 or -ENOENT.
 */
static int find_mount(char *mnt, size_t mcap, char *root, size_t rcap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		char r[PATH_MAX], m[PATH_MAX];
		const char *dash = strstr(line, " - ");

		/* id parent maj:min root mount-point options ... - type source ... */
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8) ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2)
			continue;
		if (strlen(m) < mcap && strlen(r) < rcap) {
			strcpy(mnt, m);
			strcpy(root, r);
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* Process @pid's cgroup v2 path ("0::PATH" in /proc/PID/cgroup) into @path. */
static int proc_cgroup(pid_t pid, char *path, size_t cap)
{
	char name[64], line[PATH_MAX + 8];
	FILE *f;
	int err = -ENOENT;

	snprintf(name, sizeof(name), "/proc/%d/cgroup", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (err && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		line[n] = '\0';
		if (strncmp(line, "0::", 3) || n - 3 >= cap)
			continue;
		strcpy(path, line + 3);
		err = 0;
	}
	fclose(f);
	return err;
}

/* Move every process of cgroup @from into cgroup @to (those alive). */
static void move_all(const char *from, const char *to)
{
	char path[PATH_MAX + 16], dest[PATH_MAX + 16], pid[24];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", from);
	snprintf(dest, sizeof(dest), "%s/cgroup.procs", to);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(pid, sizeof(pid), f))
		write_file(dest, pid);	/* ESRCH: it ended meanwhile */
	fclose(f);
}

/* Let go, put back, remove: what heapsnoop's end or its guard does. */
static void release_all(const char *dir, const char *orig)
{
	char path[PATH_MAX + 16];

	/*
	 * Back in its own cgroup, a process runs (one moved out of a frozen
	 * cgroup is thawed): moved first, so that it never runs here again.
	 * A process that forks meanwhile leaves a child behind: again.
	 */
	snprintf(path, sizeof(path), "%s/cgroup.freeze", dir);
	for (int i = 0; i < 8; i++) {
		move_all(dir, orig);
		write_file(path, "0");
		if (!rmdir(dir) || errno == ENOENT)
			return;
	}
}

/*
 * The guard: its own session (a terminal's signals are for heapsnoop),
 * every signal but SIGKILL ignored, nothing of heapsnoop's open but what
 * it watches. When heapsnoop's pidfd polls readable (it died) or its pipe
 * reaches EOF without "x", it lets the processes go and puts them back.
 */
static void guard_main(int pidfd, int rd, const char *dir, const char *orig)
{
	struct pollfd p[2] = { { .fd = 0, .events = POLLIN }, { .fd = 1, .events = POLLIN } };
	char c;

	setsid();
	prctl(PR_SET_NAME, "heapsnoop-guard");
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			signal(sig, SIG_IGN);
	/*
	 * Nothing else of heapsnoop's stays open here: a BPF link's copy
	 * would keep its probe attached after heapsnoop closed its own.
	 */
	if (dup2(pidfd, 3) < 0 || dup2(rd, 4) < 0 || dup2(3, 0) < 0 || dup2(4, 1) < 0)
		_exit(1);
	if (syscall(SYS_close_range, 2, ~0u, 0))
		for (int fd = 2; fd < 65536; fd++)
			close(fd);
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents && read(rd, &c, 1) == 1 && c == 'x')
			_exit(0);
		if (p[0].revents || p[1].revents)
			break;
	}
	release_all(dir, orig);
	_exit(0);
}

static int start_guard(struct hold *h)
{
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0), pfd[2], err;

	if (pidfd < 0)
		return -errno;
	if (pipe2(pfd, O_CLOEXEC)) {
		err = -errno;
		close(pidfd);
		return err;
	}
	h->guard = fork();
	if (h->guard == 0)
		guard_main(pidfd, pfd[0], h->dir, h->orig);
	err = h->guard < 0 ? -errno : 0;
	close(pidfd);
	close(pfd[0]);
	if (err) {
		close(pfd[1]);
		return err;
	}
	h->guard_fd = pfd[1];
	return 0;
}

int hold__new(pid_t pid, char *why, size_t cap, struct hold **out)
{
	char mnt[PATH_MAX], root[PATH_MAX], cg[PATH_MAX], path[PATH_MAX + 32];
	pthread_mutexattr_t ma;
	const char *rel;
	struct hold *h;
	size_t rlen;
	int err;

	err = find_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (err) {
		snprintf(why, cap, "no cgroup v2 hierarchy is mounted");
		return err;
	}
	err = proc_cgroup(pid, cg, sizeof(cg));
	if (err) {
		snprintf(why, cap, err == -ESRCH ? "the process is gone" :
			 "it is in no cgroup v2 (/proc/%d/cgroup)", (int)pid);
		return err;
	}
	rlen = strcmp(root, "/") ? strlen(root) : 0;
	if (strncmp(cg, root, rlen) || (cg[rlen] && cg[rlen] != '/')) {
		snprintf(why, cap, "its cgroup %s is not under %s's", cg, mnt);
		return -ENOENT;
	}
	rel = cg + rlen;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->freeze_fd = h->guard_fd = -1;
	/*
	 * Priority inheritance: the loop lets go under the lock, and the
	 * write wakes every thread it held, which may take its CPU for a
	 * while; the real-time watch thread (stream/flow.h) that wants to
	 * hold them again meanwhile lends the loop its priority instead of
	 * waiting behind them.
	 */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&h->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	snprintf(h->orig, sizeof(h->orig), "%s%s", mnt, strcmp(rel, "/") ? rel : "");
	for (int i = 0;; i++) {
		snprintf(h->dir, sizeof(h->dir), i ? "%s/heapsnoop-%d.%d" : "%s/heapsnoop-%d",
			 h->orig, (int)getpid(), i);
		if (!mkdir(h->dir, 0755))
			break;
		if (errno != EEXIST || i == 16) {
			err = -errno;
			snprintf(why, cap, "cannot make the cgroup %s: %s", h->dir, strerror(-err));
			h->dir[0] = '\0';
			goto fail;
		}
	}
	snprintf(path, sizeof(path), "%s/cgroup.freeze", h->dir);
	h->freeze_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (h->freeze_fd < 0) {
		err = -errno;
		snprintf(why, cap, "%s: %s (a kernel before 5.2 has no freezer in cgroup v2)",
			 path, strerror(-err));
		goto fail;
	}
	err = start_guard(h);
	if (err) {
		snprintf(why, cap, "cannot start the process that lets it go if heapsnoop dies: %s",
			 strerror(-err));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", h->dir);
	snprintf(cg, sizeof(cg), "%d\n", (int)pid);
	err = write_file(path, cg);
	if (err) {
		snprintf(why, cap, "cannot move it into %s: %s", h->dir, strerror(-err));
		goto fail;
	}
	*out = h;
	return 0;
fail:
	hold__free(h);
	return err;
}

int hold__set(struct hold *h, bool on)
{
	int err = 0;

	pthread_mutex_lock(&h->lock);
	if (on != h->held) {
		/*
		 * From the write on: a thaw's write returns once this thread
		 * runs again, which the processes it wakes may delay by a time
		 * slice each; they run meanwhile.
		 */
		uint64_t t = now_ns();

		if (pwrite(h->freeze_fd, on ? "1" : "0", 1, 0) != 1) {
			err = -errno;
		} else if (on) {
			h->held = true;
			h->since = t;
			h->st.holds++;
		} else {
			uint64_t d = t - h->since;

			h->held = false;
			h->st.held_ns += d;
			if (d > h->st.longest_ns)
				h->st.longest_ns = d;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

bool hold__held(const struct hold *h)
{
	return __atomic_load_n(&h->held, __ATOMIC_RELAXED);
}

void hold__stats(const struct hold *h, struct hold_stats *st)
{
	*st = h->st;
}

void hold__free(struct hold *h)
{
	if (!h)
		return;
	if (h->held)
		hold__set(h, false);
	if (h->dir[0])
		release_all(h->dir, h->orig);
	if (h->freeze_fd >= 0)
		close(h->freeze_fd);
	if (h->guard > 0) {
		/* All done: the guard leaves without touching anything. */
		if (h->guard_fd >= 0 && write(h->guard_fd, "x", 1) != 1)
			kill(h->guard, SIGKILL);
		while (waitpid(h->guard, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (h->guard_fd >= 0)
		close(h->guard_fd);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

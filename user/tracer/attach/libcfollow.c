// SPDX-License-Identifier: MIT
/*
 * libcfollow.c - the C libraries traced processes map later, probed (see
 * libcfollow.h). The traced processes are a hash table of pids, grown by
 * the FORK records of traced parents (with -f) and shrunk by EXIT
 * records, in the records' time order.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "htab.h"
#include "libcfollow.h"
#include "libcwatch.h"
#include "msg.h"

struct libc_follow {
	struct libc_watch *watch;
	struct htab *pids;	/* pid -> (void *)1: traced */
	pid_t held;
	bool forks;
	uint64_t late;
};

static uint64_t pid_hash(pid_t pid)
{
	return htab_hash2((uint64_t)pid, 0);
}

static bool traced(const struct libc_follow *f, pid_t pid)
{
	return htab__find(f->pids, pid_hash(pid), (uintptr_t)pid) != NULL;
}

static void add(struct libc_follow *f, pid_t pid)
{
	if (!traced(f, pid) && htab__add(f->pids, pid_hash(pid), (uintptr_t)pid, (void *)1))
		elog("out of memory: the C libraries pid %d maps will not be probed", pid);
}

struct libc_follow *libc_follow__new(struct libc_watch *w, pid_t target, pid_t held, bool forks)
{
	struct libc_follow *f = calloc(1, sizeof(*f));

	if (!f || !(f->pids = htab__new(64, NULL, NULL))) {
		free(f);
		return NULL;
	}
	f->watch = w;
	f->held = held;
	f->forks = forks;
	add(f, target);
	return f;
}

void libc_follow__free(struct libc_follow *f)
{
	if (!f)
		return;
	htab__free(f->pids);
	free(f);
}

void libc_follow__on_task(void *ctx, pid_t pid, pid_t ppid)
{
	struct libc_follow *f = ctx;

	if (!ppid)
		htab__delete(f->pids, pid_hash(pid), (uintptr_t)pid);
	else if (f->forks && traced(f, ppid))
		add(f, pid);
}

void libc_follow__on_file(void *ctx, pid_t pid, const struct mapping *m)
{
	struct libc_follow *f = ctx;
	char path[PATH_MAX], root[PATH_MAX];
	int n;

	if (pid == f->held || !traced(f, pid))
		return;
	n = libc_watch__map(f->watch, pid, m, path, sizeof(path));
	if (!n)
		return;
	f->late++;
	/* The record names the file as the process sees it: in its root. */
	proc_maps__root(pid, root, sizeof(root));
	if (n == -ESRCH)
		elog("pid %d mapped %s%s, a C library not probed before, and ended before it "
		     "could be: that process was not traced", pid, root, m->path);
	else if (n < 0)
		elog("pid %d maps %s%s, a C library that cannot be probed: that process is not "
		     "traced", pid, root, m->path);
	else
		elog("pid %d maps %s%s, a C library not probed before: probed now (%d allocator "
		     "functions); what it allocated before is not traced", pid, root, m->path, n);
}

uint64_t libc_follow__late(const struct libc_follow *f)
{
	return f ? f->late : 0;
}

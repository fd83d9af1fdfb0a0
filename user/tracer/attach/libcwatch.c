// SPDX-License-Identifier: MIT
/* libcwatch.c - one set of probes per allocator file (see libcwatch.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "attach.h"
#include "detach.h"
#include "heapsnoop.skel.h"
#include "libcwatch.h"
#include "msg.h"

struct libc_file {
	uint64_t dev, ino;
	struct attachment *att;	/* NULL: could not be probed ... */
	int err;		/* ... and why (-errno) */
};

struct libc_watch {
	struct heapsnoop_bpf *skel;
	pid_t pid;
	bool verbose;
	struct libc_file *v;
	size_t n;
	int attached;
};

struct libc_watch *libc_watch__new(struct heapsnoop_bpf *skel, pid_t pid, bool verbose)
{
	struct libc_watch *w = calloc(1, sizeof(*w));

	if (w) {
		w->skel = skel;
		w->pid = pid;
		w->verbose = verbose;
	}
	return w;
}

void libc_watch__free(struct libc_watch *w, struct link_batch *b)
{
	struct link_batch *own = b ? NULL : link_batch__new();

	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		attach__detach(w->v[i].att, b ? b : own);
	link_batch__destroy(own);
	free(w->v);
	free(w);
}

static struct libc_file *known(const struct libc_watch *w, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].dev == dev && w->v[i].ino == ino)
			return &w->v[i];
	return NULL;
}

/* The result of a file probed: its functions, or why it could not be. */
static int result(const struct libc_file *f)
{
	return f->att ? attach__count(f->att) : f->err;
}

int libc_watch__probe(struct libc_watch *w, const char *path, bool *fresh)
{
	struct libc_file *v, *f;
	struct stat st;
	bool armed;
	int err;

	*fresh = false;
	if (stat(path, &st))
		return -errno;
	f = known(w, st.st_dev, st.st_ino);
	if (f)
		return result(f);
	v = realloc(w->v, (w->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->v = v;
	f = &w->v[w->n++];
	/* Remembered either way, so a file that cannot be probed is tried once. */
	*f = (struct libc_file){ .dev = st.st_dev, .ino = st.st_ino };
	*fresh = true;
	/*
	 * Calls begun before their probe was in are no loss: not counted.
	 * Armed again as it was: not once the session has ended tracing.
	 */
	armed = w->skel->bss->armed;
	w->skel->bss->armed = false;
	err = attach__allocator(w->skel, path, w->pid, w->verbose, &f->att);
	w->skel->bss->armed = armed;
	if (err) {
		f->att = NULL;
		f->err = err;
		return err;
	}
	w->attached++;
	return result(f);
}

int libc_watch__map(struct libc_watch *w, pid_t pid, const struct mapping *m, char *path,
		    size_t cap)
{
	bool fresh;
	int n;

	if (!m->ino || !proc_maps__is_libc(m->path) || known(w, m->dev, m->ino))
		return 0;
	if (proc_maps__reach(pid, m, path, cap))
		return -ESRCH;	/* gone already: not remembered, the next one may do */
	n = libc_watch__probe(w, path, &fresh);
	return fresh ? n : 0;
}

void libc_watch__on_file(void *ctx, pid_t pid, const struct mapping *m)
{
	struct libc_watch *w = ctx;
	char path[PATH_MAX];
	int n = libc_watch__map(w, pid, m, path, sizeof(path));

	if (n < 0 && n != -ESRCH)
		elog("%s (pid %d) cannot be probed: processes using it are not traced",
		     m->path, pid);
	else if (n > 0)
		elog("probing %s (device %llu:%llu inode %llu, first seen in pid %d): %d "
		     "allocator functions", m->path, (unsigned long long)major(m->dev),
		     (unsigned long long)minor(m->dev), (unsigned long long)m->ino, pid, n);
}

/* proc_maps__each_pid: probe the C libraries that @pid maps. */
static int scan_pid(pid_t pid, void *ctx)
{
	struct mapset *pm;

	if (proc_maps__load_files(pid, &pm))
		return 0;	/* gone meanwhile, or a kernel thread */
	for (size_t i = 0; i < pm->n; i++)
		libc_watch__on_file(ctx, pid, &pm->v[i]);
	mapset__free(pm);
	return 0;
}

int libc_watch__scan(struct libc_watch *w)
{
	int err = proc_maps__each_pid(scan_pid, w);

	if (err)
		return err;
	return w->attached ? w->attached : -ENOENT;
}

int libc_watch__count(const struct libc_watch *w)
{
	return w->attached;
}

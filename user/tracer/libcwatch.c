// SPDX-License-Identifier: MIT
/* libcwatch.c - one set of probes per C library file (see libcwatch.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "attach.h"
#include "heapsnoop.skel.h"
#include "libcwatch.h"
#include "msg.h"

struct libc_file {
	uint64_t dev, ino;
	struct attachment *att;	/* NULL: could not be probed */
};

struct libc_watch {
	struct heapsnoop_bpf *skel;
	bool verbose;
	struct libc_file *v;
	size_t n;
	int attached;
};

struct libc_watch *libc_watch__new(struct heapsnoop_bpf *skel, bool verbose)
{
	struct libc_watch *w = calloc(1, sizeof(*w));

	if (w) {
		w->skel = skel;
		w->verbose = verbose;
	}
	return w;
}

void libc_watch__free(struct libc_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		attach__free(w->v[i].att);
	free(w->v);
	free(w);
}

static bool known(const struct libc_watch *w, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].dev == dev && w->v[i].ino == ino)
			return true;
	return false;
}

/*
 * Probe the file (@m->dev, @m->ino) that @pid maps at @m, through the
 * first path to it that is that very file. Remembered either way, so a
 * library that cannot be probed is tried once.
 */
static void probe(struct libc_watch *w, pid_t pid, const struct mapping *m)
{
	char path[PATH_MAX];
	struct libc_file *v, *f;
	int err;

	if (proc_maps__reach(pid, m, path, sizeof(path)))
		return;	/* gone already: the next process that maps it will do */
	v = realloc(w->v, (w->n + 1) * sizeof(*v));
	if (!v)
		return;
	w->v = v;
	f = &w->v[w->n++];
	*f = (struct libc_file){ .dev = m->dev, .ino = m->ino };
	/* Calls begun before their probe was in are no loss: not counted. */
	w->skel->bss->armed = false;
	err = attach__allocator(w->skel, path, -1, w->verbose, &f->att);
	w->skel->bss->armed = true;
	if (err) {
		f->att = NULL;
		elog("%s (pid %d) cannot be probed: processes using it "
			"are not traced", m->path, pid);
		return;
	}
	w->attached++;
	elog("probing %s (device %llu:%llu inode %llu, first seen in pid "
		"%d): %d allocator functions", m->path, (unsigned long long)major(m->dev),
		(unsigned long long)minor(m->dev), (unsigned long long)m->ino, pid,
		attach__count(f->att));
}

void libc_watch__on_file(void *ctx, pid_t pid, const struct mapping *m)
{
	struct libc_watch *w = ctx;

	if (m->ino && proc_maps__is_libc(m->path) && !known(w, m->dev, m->ino))
		probe(w, pid, m);
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

// SPDX-License-Identifier: MIT
/*
 * execprobe.c - each exec's allocator, probed before the image runs (see
 * execprobe.h). At the exec stop the kernel has mapped the new image and
 * its dynamic loader (PT_INTERP), nothing else: a C library among them
 * (musl's loader is its C library) or a static image's own malloc is
 * probed there. Otherwise the loader's system calls are followed: after
 * each mmap or mprotect that makes something executable, /proc/PID/maps
 * is read for a C library; the process is stopped at that call's exit,
 * so the probes go in before the loader relocates the library or calls
 * into it (glibc's loader calls malloc once it has relocated libc). A
 * system call made from outside the loader's code means it has handed
 * over to the program with no C library mapped.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heapsnoop/arch.h"

#include "execprobe.h"
#include "libcwatch.h"
#include "maps/elffile.h"
#include "maps/procmaps.h"
#include "msg.h"

/* A loader makes dozens of system calls; this many, and it is not one. */
#define EXEC_PROBE_MAX_STOPS 4096
/* Executable mappings of one dynamic loader (one, in practice). */
#define EXEC_PROBE_MAX_RANGES 8

struct range {
	uint64_t start, end;
};

struct exec_probe {
	struct libc_watch *watch;
	const char *allocator;	/* --allocator, or NULL */
	bool verbose;
	char exe[PATH_MAX];	/* the image being loaded, as /proc/PID/exe names it */
	struct range loader[EXEC_PROBE_MAX_RANGES];	/* its dynamic loader's code */
	int nloader;
	unsigned int stops;	/* system-call stops since the exec */
	uint64_t nr, prot;	/* the last system call entered ... */
	bool in_call;		/* ... and not returned yet */
	uint64_t dev, ino;	/* the file the last exec probed; 0: none */
	uint64_t untraced;
};

struct exec_probe *exec_probe__new(struct libc_watch *w, const char *allocator, bool verbose)
{
	struct exec_probe *ep = calloc(1, sizeof(*ep));

	if (ep) {
		ep->watch = w;
		ep->allocator = allocator;
		ep->verbose = verbose;
	}
	return ep;
}

void exec_probe__free(struct exec_probe *ep)
{
	free(ep);
}

uint64_t exec_probe__untraced(const struct exec_probe *ep)
{
	return ep ? ep->untraced : 0;
}

/* An image runs untraced: said at once, counted for the end. */
__attribute__((format(printf, 3, 4)))
static void untraced(struct exec_probe *ep, pid_t pid, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	ep->untraced++;
	ep->dev = ep->ino = 0;
	elog("pid %d execs %s: NOT TRACED: %s", pid, ep->exe, why);
}

/*
 * Probe the file at @path (reachable from here), described as @what.
 * Said with -v, else only when it is another file than the last exec's.
 */
static void probe(struct exec_probe *ep, pid_t pid, const char *path, const char *what)
{
	struct stat st;
	bool fresh, same;
	int n = libc_watch__probe(ep->watch, path, &fresh);

	if (n < 0) {
		untraced(ep, pid, "%s cannot be probed (%s)", what, strerror(-n));
		return;
	}
	if (stat(path, &st))
		st.st_dev = st.st_ino = 0;
	same = st.st_ino && st.st_dev == ep->dev && st.st_ino == ep->ino;
	if (!same || ep->verbose)
		elog("pid %d execs %s: probing %s: %d allocator functions%s", pid, ep->exe, what,
		     n, fresh ? "" : " (probed before)");
	ep->dev = st.st_dev;
	ep->ino = st.st_ino;
}

/* A C library @pid maps, probed through a path that is that file. */
static void probe_mapping(struct exec_probe *ep, pid_t pid, const struct mapping *m)
{
	char path[PATH_MAX];

	if (proc_maps__reach(pid, m, path, sizeof(path)))
		untraced(ep, pid, "its C library %s cannot be reached from here", m->path);
	else
		probe(ep, pid, path, m->path);
}

/*
 * --allocator, in the process's own root if absolute (a chroot's copy).
 * Returns -ENOENT if there is none there (said: its own allocator is
 * probed instead), else 0 (probed, or said as not traced).
 */
static int probe_allocator(struct exec_probe *ep, pid_t pid)
{
	char path[PATH_MAX], root[PATH_MAX], what[2 * PATH_MAX + 16];

	proc_maps__root(pid, root, sizeof(root));
	if (ep->allocator[0] == '/')
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, ep->allocator);
	else
		snprintf(path, sizeof(path), "%s", ep->allocator);
	if (access(path, R_OK)) {
		elog("pid %d execs %s: --allocator %s is not in its root (%s): probing its own "
		     "allocator instead", pid, ep->exe, ep->allocator, *root ? root : "/");
		return -ENOENT;
	}
	snprintf(what, sizeof(what), "--allocator %s%s", ep->allocator[0] == '/' ? root : "",
		 ep->allocator);
	probe(ep, pid, path, what);
	return 0;
}

/* The first executable C library mapping of @pid, probed: true if any. */
static bool probe_libc(struct exec_probe *ep, pid_t pid, const struct mapset *pm)
{
	for (size_t i = 0; i < pm->n; i++) {
		if (proc_maps__is_libc(pm->v[i].path)) {
			probe_mapping(ep, pid, &pm->v[i]);
			return true;
		}
	}
	return false;
}

static void add_range(struct exec_probe *ep, const struct mapping *m)
{
	if (ep->nloader < EXEC_PROBE_MAX_RANGES)
		ep->loader[ep->nloader++] = (struct range){ m->start, m->end };
}

static bool in_loader(const struct exec_probe *ep, uint64_t ip)
{
	for (int i = 0; i < ep->nloader; i++)
		if (ip >= ep->loader[i].start && ip < ep->loader[i].end)
			return true;
	return false;
}

/* Whether the ELF file at @path defines malloc and free (a static image). */
static bool own_malloc(const char *path)
{
	struct elf_file *ef;
	struct elf_func fn;
	bool has;

	if (elf_file__open(path, &ef))
		return false;
	has = !elf_file__find_func(ef, "malloc", &fn) && !elf_file__find_func(ef, "free", &fn);
	elf_file__close(ef);
	return has;
}

/* glibc's dynamic loader run as the program (ld-linux-x86-64.so.2 PROG). */
static bool is_loader(const char *path)
{
	return !fnmatch("ld-*.so*", path_base(path), 0);
}

bool exec_probe__exec(struct exec_probe *ep, pid_t pid)
{
	char link[64];
	struct mapset *pm = NULL;
	struct elf_file *ef;
	struct stat exe;
	bool native = true, walk = false;
	ssize_t n;
	int err;

	ep->nloader = 0;
	ep->stops = 0;
	ep->in_call = false;
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, ep->exe, sizeof(ep->exe) - 1);
	if (n > 0)
		ep->exe[n] = '\0';
	else
		snprintf(ep->exe, sizeof(ep->exe), "?");
	err = stat(link, &exe) ? -errno : proc_maps__load_files(pid, &pm);
	if (err) {
		untraced(ep, pid, "its image cannot be read: %s", strerror(-err));
		return false;
	}
	if (!elf_file__open(link, &ef)) {
		native = elf_file__is_native(ef);
		elf_file__close(ef);
	}
	if (!native) {
		untraced(ep, pid, "not an " HS_ARCH_NAME " program (32-bit, x32 or another "
			 "machine): heapsnoop traces " HS_ARCH_NAME " processes only");
		goto out;
	}
	if (ep->allocator && probe_allocator(ep, pid) != -ENOENT)
		goto out;
	if (probe_libc(ep, pid, pm))
		goto out;	/* musl's loader is its C library */
	for (size_t i = 0; i < pm->n; i++)
		if (pm->v[i].path[0] == '/' &&
		    (pm->v[i].dev != exe.st_dev || pm->v[i].ino != exe.st_ino))
			add_range(ep, &pm->v[i]);
	if (!ep->nloader) {
		/* No PT_INTERP: statically linked, or the loader run as a program. */
		if (own_malloc(link)) {
			probe(ep, pid, link, "its own malloc, statically linked");
			goto out;
		}
		if (!is_loader(ep->exe)) {
			untraced(ep, pid, "statically linked, with no malloc and free symbols "
				 "(stripped?): name the file that has them with --allocator");
			goto out;
		}
		for (size_t i = 0; i < pm->n; i++)
			if (pm->v[i].path[0] == '/')
				add_range(ep, &pm->v[i]);
	}
	walk = true;
out:
	mapset__free(pm);
	return walk;
}

bool exec_probe__syscall(struct exec_probe *ep, pid_t pid, const struct launch_syscall *sc)
{
	struct mapset *pm;
	bool found;

	if (!sc) {
		untraced(ep, pid, "its dynamic loader cannot be followed: "
			 "PTRACE_GET_SYSCALL_INFO failed (%s; Linux 5.3 has it)", strerror(errno));
		return false;
	}
	if (++ep->stops > EXEC_PROBE_MAX_STOPS) {
		untraced(ep, pid, "its dynamic loader made %u system calls and mapped no C "
			 "library: name its allocator with --allocator", EXEC_PROBE_MAX_STOPS);
		return false;
	}
	if (sc->entry) {
		if (!in_loader(ep, sc->ip)) {
			untraced(ep, pid, "its dynamic loader mapped no C library heapsnoop knows "
				 "by name (libc.so.6, libc-*.so, musl's): name its allocator with "
				 "--allocator PATH (PATH as in its root)");
			return false;
		}
		ep->nr = sc->nr;
		ep->prot = sc->args[2];
		ep->in_call = true;
		return true;
	}
	if (!ep->in_call)
		return true;	/* the exit of the execve itself */
	ep->in_call = false;
	if (sc->is_error || !(ep->prot & PROT_EXEC) ||
	    (ep->nr != SYS_mmap && ep->nr != SYS_mprotect))
		return true;
	if (proc_maps__load_files(pid, &pm))
		return true;	/* gone: its exit stop comes next */
	found = probe_libc(ep, pid, pm);
	mapset__free(pm);
	return !found;
}

// SPDX-License-Identifier: MIT
/*
 * procmaps.c - /proc/PID/maps parsing (format: proc(5)) and build IDs of
 * the mapped files, reached through /proc. See procmaps.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "procmaps.h"
#include "text.h"

/* One line: "start-end perms offset dev inode   path". */
static int parse_line(char *line, struct mapping *m, char *perms, const char **path)
{
	unsigned long long s, e, off, ino;
	unsigned int maj, min;
	int n = 0;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj, &min,
		   &ino, &n) < 7 || !n)
		return -EINVAL;
	m->dev = makedev(maj, min);
	m->ino = ino;
	m->start = s;
	m->end = e;
	m->offset = off;
	*path = line + n;
	return 0;
}

/*
 * Is the mapping of @path anonymous memory (no file: an empty path, or a
 * name given by PR_SET_VMA_ANON_NAME)? proc(5); "[anon:" since Linux 5.17.
 */
static bool is_anon(const char *path, const struct mapping *m)
{
	return !m->ino && (!path[0] || !strncmp(path, "[anon:", 6));
}

/* Through map_files: the mapped file itself, whatever its path is now. */
static void read_build_id(pid_t pid, struct mapping *m, struct buildid_cache *bc)
{
	char mf[96];

	if (buildid_cache__find(bc, m->dev, m->ino, m->build_id) == 0)
		return;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	buildid_cache__read(bc, m->dev, m->ino, mf, m->build_id);
}

int proc_maps__reach(pid_t pid, const struct mapping *m, char *path, size_t cap)
{
	struct stat st;

	for (int i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(path, cap, "/proc/%d/map_files/%llx-%llx", pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
		else if (i == 1)
			snprintf(path, cap, "/proc/%d/root%s", pid, m->path);
		else
			snprintf(path, cap, "%s", m->path);
		if (!stat(path, &st) && (!m->dev || (st.st_dev == m->dev && st.st_ino == m->ino)))
			return 0;
	}
	return -ENOENT;
}

void proc_maps__root(pid_t pid, char *root, size_t cap)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/root", pid);
	n = readlink(link, root, cap - 1);
	if (n <= 0 || (n == 1 && root[0] == '/'))
		n = 0;
	root[n] = '\0';
}

void proc_maps__build_id(pid_t pid, struct mapping *m, struct buildid_cache *bc)
{
	char path[PATH_MAX];

	if (buildid_cache__find(bc, m->dev, m->ino, m->build_id) == 0)
		return;
	if (proc_maps__reach(pid, m, path, sizeof(path)))
		strcpy(m->build_id, "-");
	else
		buildid_cache__read(bc, m->dev, m->ino, path, m->build_id);
}

static int load(pid_t pid, bool build_ids, struct buildid_cache *bc, struct mapset **out)
{
	char fn[64], *line = NULL, perms[8];
	struct mapset *pm;
	size_t cap = 0, vcap = 0;
	FILE *f;
	int err = 0;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	pm = mapset__new(pid);
	if (!pm) {
		fclose(f);
		return -ENOMEM;
	}
	while (getline(&line, &cap, f) > 0) {
		struct mapping m = { 0 };
		const char *path;
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (parse_line(line, &m, perms, &path) || perms[2] != 'x')
			continue;
		if (is_anon(path, &m)) {
			/* JIT code: kept for the unwinder's frame-pointer steps. */
			if (!build_ids)
				continue;
			m.flags = MAPPING_ANON;
			if (!path[0])
				path = MAPPING_ANON_PATH;
		} else if (path[0] != '/' && strcmp(path, "[vdso]")) {
			continue;
		}
		if (pm->n == vcap) {
			struct mapping *v;

			vcap = vcap ? vcap * 2 : 32;
			v = realloc(pm->v, vcap * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			pm->v = v;
		}
		m.path = strdup(path);
		if (!m.path) {
			err = -ENOMEM;
			break;
		}
		if (path[0] == '/' && build_ids)
			read_build_id(pid, &m, bc);
		else if (path[0] == '/')
			m.build_id[0] = '\0';
		else
			strcpy(m.build_id, "-");
		pm->v[pm->n++] = m;
	}
	free(line);
	fclose(f);
	/* An empty maps file: a zombie or a kernel thread. */
	if (!err && pm->n == 0)
		err = -ESRCH;
	if (err) {
		mapset__free(pm);
		return err;
	}
	*out = pm;
	return 0;
}

int proc_maps__load(pid_t pid, struct buildid_cache *bc, struct mapset **out)
{
	return load(pid, true, bc, out);
}

int proc_maps__load_files(pid_t pid, struct mapset **out)
{
	return load(pid, false, NULL, out);
}

bool proc_maps__is_libc(const char *path)
{
	static const char *const pats[] = {
		"libc.so.6", "libc-*.so", "libc.so", "libc.musl-*.so.1", "ld-musl-*.so.1",
	};
	const char *base = path_base(path);

	/* Only paths: a bare name is no mapped file. */
	for (size_t p = 0; strchr(path, '/') && p < sizeof(pats) / sizeof(pats[0]); p++)
		if (fnmatch(pats[p], base, 0) == 0)
			return true;
	return false;
}

int proc_maps__find_libc(pid_t pid, char *path, size_t cap)
{
	struct mapset *pm;
	int err = proc_maps__load_files(pid, &pm);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < pm->n && err; i++) {
		if (!proc_maps__is_libc(pm->v[i].path))
			continue;
		if (pid == getpid()) {
			snprintf(path, cap, "%s", pm->v[i].path);
		} else {
			struct stat st;

			/*
			 * Its root's view; a process in a chroot under ours has
			 * its maps' paths from our root (the kernel names them
			 * from the reader's root): then the path as it is.
			 */
			snprintf(path, cap, "/proc/%d/root%s", pid, pm->v[i].path);
			if ((stat(path, &st) || st.st_dev != pm->v[i].dev ||
			     st.st_ino != pm->v[i].ino) && !stat(pm->v[i].path, &st) &&
			    st.st_dev == pm->v[i].dev && st.st_ino == pm->v[i].ino)
				snprintf(path, cap, "%s", pm->v[i].path);
		}
		err = 0;
	}
	mapset__free(pm);
	return err;
}

int proc_maps__maps_file(pid_t pid, dev_t dev, ino_t ino)
{
	struct mapset *pm;
	int err = proc_maps__load_files(pid, &pm), found = 0;

	if (err)
		return err;
	for (size_t i = 0; i < pm->n && !found; i++)
		found = pm->v[i].dev == dev && pm->v[i].ino == ino;
	mapset__free(pm);
	return found;
}

int proc_maps__stack(pid_t pid, uint64_t *start, uint64_t *end)
{
	char fn[64], line[512];
	unsigned long long s, e;
	int err = -ENOENT;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return -ESRCH;
	while (err && fgets(line, sizeof(line), f)) {
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &s, &e) == 2) {
			*start = s;
			*end = e;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

int proc_maps__comm(pid_t pid, char *buf, size_t cap)
{
	char fn[64];
	FILE *f;
	int err = 0;

	snprintf(fn, sizeof(fn), "/proc/%d/comm", pid);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)cap, f))
		err = ferror(f) ? -EIO : -ENOENT;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return err;
}

int proc_maps__each_pid(int (*fn)(pid_t pid, void *ctx), void *ctx)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int ret = 0;

	if (!proc)
		return -errno;
	while (!ret && (de = readdir(proc))) {
		unsigned long pid;
		char *end;

		errno = 0;
		pid = strtoul(de->d_name, &end, 10);
		if (*end || end == de->d_name || !pid || pid > INT32_MAX || errno)
			continue;	/* not a process */
		ret = fn((pid_t)pid, ctx);
	}
	closedir(proc);
	return ret;
}

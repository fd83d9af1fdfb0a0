// SPDX-License-Identifier: MIT
/*
 * jitdumpfile.c - a process's jitdump found by its executable mapping and
 * read as it grows (see jitdumpfile.h; the records: jitdump.c). How perf
 * finds it: tools/perf/util/jitdump.c, jit_detect(), a mapping of a file
 * whose name is jit-<pid>.dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "jitdumpfile.h"
#include "msg.h"
#include "perfmap.h"

struct jit_dump_file {
	pid_t pid;
	struct jit_dump *jd;
	int fd;			/* the file, open once found; -1 */
	bool tried, said;	/* looked for at open_ns; its refusal said */
	uint64_t open_ns;	/* (CLOCK_MONOTONIC) */
	uint64_t size;		/* the size last read to */
	char *path;		/* as the process maps it, for messages */
};

/* One executable mapping of a jitdump, from a /proc/PID/maps line. */
struct dump_map {
	unsigned long start, end, ino;
	unsigned int major, minor;
	char path[4096];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct jit_dump_file *jit_dump_file__new(pid_t pid)
{
	struct jit_dump_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->pid = pid;
	f->fd = -1;
	f->jd = jit_dump__new();
	if (!f->jd) {
		free(f);
		return NULL;
	}
	return f;
}

void jit_dump_file__free(struct jit_dump_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	jit_dump__free(f->jd);
	free(f->path);
	free(f);
}

/* Is @path's last component jit-<@a or @b>.dump (a " (deleted)" after it)? */
static bool dump_name(const char *path, pid_t a, pid_t b)
{
	const char *base = strrchr(path, '/');
	int n = -1, pid;

	base = base ? base + 1 : path;
	if (sscanf(base, "jit-%9d.dump%n", &pid, &n) != 1 || n < 0 ||
	    (base[n] && strcmp(base + n, " (deleted)")))
		return false;
	return pid == a || pid == b;
}

/* The process's executable mapping of its jitdump into @m: 0 or -ENOENT. */
static int find_map(pid_t pid, struct dump_map *m)
{
	pid_t ns = perf_map__ns_pid(pid);
	char fn[64], line[4400];
	int err = -ENOENT;
	FILE *maps;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	maps = fopen(fn, "re");
	if (!maps)
		return -ENOENT;
	while (err && fgets(line, sizeof(line), maps)) {
		char perms[5];
		int at = 0;

		if (sscanf(line, "%lx-%lx %4s %*x %x:%x %lu %n", &m->start, &m->end, perms,
			   &m->major, &m->minor, &m->ino, &at) < 6 || !at || perms[2] != 'x')
			continue;
		snprintf(m->path, sizeof(m->path), "%s", line + at);
		m->path[strcspn(m->path, "\n")] = '\0';
		if (m->path[0] == '/' && dump_name(m->path, pid, ns))
			err = 0;
	}
	fclose(maps);
	return err;
}

/*
 * The mapped file, opened as jitdumpfile.h says: through map_files (root
 * may), else by its path in the process's root if that is the file mapped.
 */
static int open_dump(pid_t pid, const struct dump_map *m, struct stat *st)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW |
					 O_NOCTTY,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char fn[96];
	struct stat owner;
	int fd, dfd;

	snprintf(fn, sizeof(fn), "/proc/%d", pid);
	if (stat(fn, &owner))
		return -ENOENT;
	snprintf(fn, sizeof(fn), "/proc/%d/map_files/%lx-%lx", pid, m->start, m->end);
	fd = open(fn, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && !strstr(m->path, " (deleted)")) {
		snprintf(fn, sizeof(fn), "/proc/%d/root", pid);
		dfd = open(fn, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -ENOENT;
		fd = (int)syscall(SYS_openat2, dfd, m->path, &how, sizeof(how));
		close(dfd);
	}
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -ENOENT;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != owner.st_uid ||
	    st->st_ino != m->ino || major(st->st_dev) != m->major ||
	    minor(st->st_dev) != m->minor) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* jit_dump_read_fn over the open file: exactly @n bytes at @off. */
static int fd_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct jit_dump_file *f = ctx;

	while (n) {
		ssize_t got = pread(f->fd, buf, n, (off_t)off);

		if (got <= 0)
			return -EIO;
		buf = (char *)buf + got;
		off += (uint64_t)got;
		n -= (size_t)got;
	}
	return 0;
}

int jit_dump_file__refresh(struct jit_dump_file *f, uint64_t retry_ns)
{
	struct dump_map *m;
	struct stat st;
	int err;

	if (f->fd < 0) {
		uint64_t now = now_ns();

		if (f->tried && now - f->open_ns < retry_ns)
			return -ENOENT;
		f->tried = true;
		f->open_ns = now;
		m = malloc(sizeof(*m));
		if (!m)
			return -ENOMEM;
		err = find_map(f->pid, m);
		if (!err) {
			err = open_dump(f->pid, m, &st);
			if (err >= 0 && !(f->path = strdup(m->path))) {
				close(err);
				err = -ENOMEM;
			}
		}
		free(m);
		if (err < 0)
			return err;
		f->fd = err;
	} else if (fstat(f->fd, &st)) {
		return -errno;
	}
	if ((uint64_t)st.st_size == f->size)
		return 0;
	f->size = (uint64_t)st.st_size;
	err = jit_dump__parse(f->jd, fd_read, f, f->size);
	if (err == -ENOMEM)
		f->size = 0;	/* read again next time */
	if (err == -EPROTO && !f->said) {
		f->said = true;
		elog("pid %d's jitdump %s is not read: %s; its JIT frames are named by its "
		     "perf map only, if it writes one", f->pid, f->path, jit_dump__why(f->jd));
	}
	return err;
}

const struct jit_dump *jit_dump_file__dump(const struct jit_dump_file *f)
{
	return f->jd;
}

int jit_dump_file__found(const struct jit_dump_file *f)
{
	return f->fd >= 0;
}

// SPDX-License-Identifier: MIT
/*
 * collectors.c - the collectors' tables the agent holds (see
 * collectors.h): the socket their hellos come to (plsock.c's reading,
 * without a token: the socket's path is the agent's, its directory
 * root's), the looks through /proc that find them again after a
 * restart, each table and segment mapped read-only and checked as
 * heapsnoop --preload's plimage.c does.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "collectors.h"
#include "heapsnoop/env.h"
#include "heapsnoop/procstat.h"
#include "msg.h"
#include "preload/plsock.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef F_GET_SEALS
#define F_GET_SEALS 1034
#define F_SEAL_SHRINK 0x0002
#endif

/* Bytes of a process's environment read at most (the kernel's ARG_MAX is 2 MiB). */
#define ENVIRON_MAX (2u << 20)

struct collectors {
	struct plsock sock;		/* its fd; name and token empty */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char want[sizeof(HS_ENV_AGENT) + sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct collector **v;
	size_t n, cap;
	struct pollfd *pfd;		/* the pidfds polled, cap of them */
	size_t npfd;
	double next_scan;
	uint64_t said;			/* tables said taken (COLLECTORS_SAID at most) */
	char *env;			/* a process's environment, read (ENVIRON_MAX + 1) */
	bool said_refused, said_over;
	struct collectors_stats st;
};

/* --- the socket ---------------------------------------------------------- */

/*
 * @path's directory: made (0755) if missing, then it must be a directory
 * (not a link) of this user that nobody else may write: then nobody else
 * can put anything where the socket goes. 0 or -errno.
 */
static int safe_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -EINVAL;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/* Does a socket listen at @path (another agent), or is it one left behind? */
static bool listening(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool yes;

	if (s < 0)
		return false;
	memcpy(a.sun_path, path, strlen(path));
	yes = !connect(s, (struct sockaddr *)&a, sizeof(a));
	close(s);
	return yes;
}

static int bind_socket(struct collectors *c)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int one = 1, size = 1 << 20, err;
	struct stat st;

	err = safe_dir(c->path);
	if (err) {
		elog("agent: %s: its directory %s (it must be a directory of this user that no "
		     "one else may write)", c->path, strerror(-err));
		return err;
	}
	/* A socket left by an agent that was killed: ours to replace. Anything else is not. */
	if (!lstat(c->path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			elog("agent: %s is there and is not a socket: not replaced", c->path);
			return -EEXIST;
		}
		if (listening(c->path)) {
			elog("agent: %s: another agent listens there", c->path);
			return -EADDRINUSE;
		}
		unlink(c->path);
	}
	memcpy(a.sun_path, c->path, strlen(c->path));
	c->sock.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->sock.fd < 0 ||
	    setsockopt(c->sock.fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
	    bind(c->sock.fd, (struct sockaddr *)&a, sizeof(a)) ||
	    chmod(c->path, 0666)) {
		err = -errno;
		elog("agent: the collectors' socket %s: %s", c->path, strerror(-err));
		return err;
	}
	/* Room for many hellos at once (a fleet's service starting its workers). */
	setsockopt(c->sock.fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return 0;
}

/* --- a table -------------------------------------------------------------- */

/* @pid's start time, clock ticks since boot (procstat.h); 0: gone. */
static uint64_t start_ticks(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return procstat__start_ticks(path);
}

/* @fd mapped read-only if it is a memfd sealed against shrinking of at least @min bytes. */
static void *map_sealed(int fd, uint64_t min, uint64_t *size, uint64_t *ino)
{
	int seals = fcntl(fd, F_GET_SEALS);
	struct stat st;
	void *p;

	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < min)
		return NULL;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	*size = (uint64_t)st.st_size;
	if (ino)
		*ino = (uint64_t)st.st_ino;
	return p;
}

static void collector_free(struct collector *col)
{
	if (!col)
		return;
	for (unsigned int i = 0; i < col->nsegs; i++)
		munmap(col->seg[i].p, col->seg[i].len);
	if (col->map)
		munmap(col->map, col->size);
	if (col->pidfd >= 0)
		close(col->pidfd);
	free(col);
}

/* One line of /proc/PID/maps: its range and its path ("" if none). */
static bool maps_line(const char *line, uint64_t *start, uint64_t *end, uint64_t *ino,
		      const char **path)
{
	unsigned long long s, e, i;
	int n = 0;

	if (sscanf(line, "%llx-%llx %*s %*s %*s %llu %n", &s, &e, &i, &n) < 3 || !n)
		return false;
	*start = s;
	*end = e;
	*ino = i;
	*path = line + n;
	return true;
}

/* The file mapped at [@start, @end) of @pid, opened (root: /proc/PID/map_files). */
static int open_mapped(pid_t pid, uint64_t start, uint64_t end)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start,
		 end);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The segment named @name ("XX (deleted)" after the table's name and "-") taken in. */
static void segment_at(struct collector *col, const char *name, uint64_t start, uint64_t end)
{
	unsigned int id, r, k;
	uint64_t len;
	void *p;
	int fd;

	if (!isxdigit((unsigned char)name[0]) || !isxdigit((unsigned char)name[1]) ||
	    strncmp(name + 2, " (deleted)", 10) || sscanf(name, "%2x", &id) != 1)
		return;
	r = id >> 5;
	k = id & 31;
	if (r >= LT_NREGIONS || !k || col->view.r[r].seg[k] || col->nsegs == LT_NREGIONS * LT_SEGS)
		return;
	fd = open_mapped(col->pid, start, end);
	if (fd < 0)
		return;
	p = map_sealed(fd, lt_view__seg_size(&col->view, r, k), &len, NULL);
	close(fd);
	if (!p)
		return;
	if (lt_view__attach(&col->view, r, k, p, len)) {
		munmap(p, len);
		return;
	}
	col->seg[col->nsegs].p = p;
	col->seg[col->nsegs++].len = len;
}

/*
 * Through @pid's maps: its table's segments not held yet taken in; if
 * @table, its table's memfd opened (the first one named so) into *@table.
 * Returns whether @col's table (its inode) is still mapped there (false
 * too when the maps cannot be read).
 */
static bool read_maps(pid_t pid, struct collector *col, int *table)
{
	static const char memfd[] = "/memfd:" LT_MEMFD_NAME;
	char path[64], line[512];
	FILE *f;

	bool mapped = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, ino;
		const char *name;

		if (!strchr(line, '\n') || !maps_line(line, &start, &end, &ino, &name) ||
		    strncmp(name, memfd, sizeof(memfd) - 1))
			continue;
		name += sizeof(memfd) - 1;
		if (!strcmp(name, " (deleted)\n")) {
			mapped |= col && ino == col->ino;
			if (table && *table < 0)
				*table = open_mapped(pid, start, end);
		} else if (col && name[0] == '-') {
			segment_at(col, name + 1, start, end);
		}
	}
	fclose(f);
	return mapped;
}

static int held(const struct collectors *c, pid_t pid)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->pid == pid)
			return (int)i;
	return -1;
}

static void drop(struct collectors *c, size_t i)
{
	collector_free(c->v[i]);
	c->v[i] = c->v[--c->n];
}

static void refused(struct collectors *c, pid_t pid, const char *why)
{
	c->st.refused++;
	if (!c->said_refused)
		elog("agent: pid %d: its live table refused (%s); counted "
		     "(heapsnoop_agent_collectors_refused_total), said once", (int)pid, why);
	c->said_refused = true;
}

/*
 * Process @pid's table, the memfd @memfd (ours to close), taken: checked,
 * mapped, its segments found; @pidfd (ours) polled for its end. A table
 * held already for @pid is kept if it is this one, else replaced (the
 * process exec'd, or its pid was used again).
 */
static void take(struct collectors *c, pid_t pid, int memfd, int pidfd, const char *source)
{
	struct collector *col = calloc(1, sizeof(*col));
	int i = held(c, pid), err;

	if (!col) {
		close(memfd);
		close(pidfd);
		refused(c, pid, "no memory");
		return;
	}
	col->pid = pid;
	col->pidfd = pidfd;
	col->map = map_sealed(memfd, LT_HDR_SIZE, &col->size, &col->ino);
	close(memfd);
	if (!col->map) {
		collector_free(col);
		refused(c, pid, "not a sealed memfd");
		return;
	}
	if (i >= 0 && c->v[i]->ino == col->ino) {
		collector_free(col);	/* the same table, said twice (a hello and a look) */
		return;
	}
	err = lt_view__open(&col->view, col->map, col->size);
	if (err) {
		collector_free(col);
		refused(c, pid, err == -EPROTO ? "a collector of another version" :
			"its header does not hold");
		return;
	}
	if (i >= 0)
		drop(c, (size_t)i);
	if (c->n == COLLECTORS_MAX) {
		collector_free(col);
		c->st.over++;
		if (!c->said_over)
			elog("agent: more than %d collectors' tables: pid %d's and later ones are "
			     "not served, counted (heapsnoop_agent_collectors_over_total)",
			     COLLECTORS_MAX, (int)pid);
		c->said_over = true;
		return;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct collector **v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			collector_free(col);
			refused(c, pid, "no memory");
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	col->start = start_ticks(pid);
	memcpy(col->comm, col->view.h->comm, sizeof(col->comm) - 1);
	for (char *p = col->comm; *p; p++)
		if (!isprint((unsigned char)*p))
			*p = '?';
	snprintf(col->source, sizeof(col->source), "%s", source);
	read_maps(pid, col, NULL);
	c->v[c->n++] = col;
	/* Said for the first ones (a service's log, not a line per process for ever). */
	if (++c->said <= COLLECTORS_SAID)
		elog("agent: pid %d (%s): its live table served (%s)%s", (int)pid, col->comm,
		     !strcmp(source, "hello") ? "it said hello" : "found in /proc",
		     c->said == COLLECTORS_SAID ? "; the next ones are counted, not said "
		     "(heapsnoop_agent_collector_hellos_total, ..._found_total)" : "");
}

/* --- hellos, ends, looks --------------------------------------------------- */

static void take_hellos(struct collectors *c)
{
	struct plhello h;
	int r;

	while ((r = plsock__recv(&c->sock, &h)) != 0) {
		if (r < 0) {
			refused(c, h.pid, r == -EPROTO ? "a collector of another version" :
				"not a hello");
			continue;
		}
		if (h.h.kind == LT_HELLO_SEGMENT || h.h.nsegs) {
			/* Segments are found by their names (collectors.h), not handed over. */
			plhello__close(&h);
			refused(c, h.pid, "segments handed over");
			continue;
		}
		c->st.hellos++;
		take(c, h.pid, h.memfd, h.pidfd, "hello");
	}
}

/* The processes that ended (their pidfds readable) let go: one poll for all. */
static void ended(struct collectors *c)
{
	size_t n = c->n;

	if (!n)
		return;
	if (c->npfd < n) {
		struct pollfd *p = realloc(c->pfd, c->cap * sizeof(*p));

		if (!p)
			return;	/* the next step tries again */
		c->pfd = p;
		c->npfd = c->cap;
	}
	for (size_t i = 0; i < n; i++)
		c->pfd[i] = (struct pollfd){ c->v[i]->pidfd, POLLIN, 0 };
	if (poll(c->pfd, n, 0) <= 0)
		return;
	/* From the end: drop() moves the last one into the hole. */
	for (size_t i = n; i-- > 0;) {
		if (c->pfd[i].revents & (POLLIN | POLLHUP)) {
			c->st.ended++;
			drop(c, i);
		}
	}
}

/* Does @pid's environment name this agent's socket (and is it not under --preload)? */
static bool says_agent(const struct collectors *c, pid_t pid)
{
	char path[64], *buf = c->env;
	size_t len = 0, want = strlen(c->want);
	bool yes = false, preload = false;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (buf && len < ENVIRON_MAX && (n = read(fd, buf + len, ENVIRON_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (buf)
		buf[len] = '\0';
	for (size_t i = 0; buf && i < len; i += strnlen(buf + i, len - i) + 1) {
		if (len - i > want && !memcmp(buf + i, c->want, want + 1))
			yes = true;
		/* heapsnoop --preload's: its table is that one's (it says no hello here). */
		preload |= !strncmp(buf + i, HS_ENV_SOCK "=", sizeof(HS_ENV_SOCK));
	}
	return yes && !preload;
}

/* Every process that names this agent's socket and maps a table not held yet. */
static void scan(struct collectors *c)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();

	if (!d)
		return;
	c->st.scans++;
	/*
	 * Each one held: still its table? An exec into a program without the
	 * collector unmapped it, and its last live set is not the process's.
	 */
	for (size_t i = c->n; i-- > 0;) {
		if (!read_maps(c->v[i]->pid, c->v[i], NULL)) {
			c->st.ended++;
			drop(c, i);
		}
	}
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		int table = -1, pidfd, i;

		if (*end || pid <= 0 || pid == self || !says_agent(c, (pid_t)pid))
			continue;
		i = held(c, (pid_t)pid);
		if (i >= 0)
			continue;
		/* The pidfd first: the maps read after it are that process's, or it has ended. */
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
		if (pidfd < 0)
			continue;
		read_maps((pid_t)pid, NULL, &table);
		if (table < 0) {
			close(pidfd);
			continue;
		}
		c->st.found++;
		take(c, (pid_t)pid, table, pidfd, "proc");
	}
	closedir(d);
}

void collectors__tick(struct collectors *c, double now)
{
	if (!c)
		return;
	take_hellos(c);
	ended(c);
	for (size_t i = 0; i < c->n; i++) {
		struct collector *col = c->v[i];

		lt_view__refresh(&col->view);
		/* A segment made since: found by its name. */
		if (lt_view__missing(&col->view))
			read_maps(col->pid, col, NULL);
	}
	if (now >= c->next_scan) {
		c->next_scan = now + COLLECTORS_SCAN_S;
		scan(c);
	}
}

/* --- the set ---------------------------------------------------------------- */

int collectors__open(const char *path, struct collectors **out)
{
	struct collectors *c;
	int err;

	if (path[0] != '/' || strlen(path) >= sizeof(c->path)) {
		elog("agent: the collectors' socket %s: an absolute path of at most %zu bytes",
		     path, sizeof(c->path) - 1);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sock.fd = -1;
	/* Its pages are touched only as far as environments go (a few KiB each). */
	c->env = malloc(ENVIRON_MAX + 1);
	if (!c->env) {
		free(c);
		return -ENOMEM;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->want, sizeof(c->want), "%s=%s", HS_ENV_AGENT, path);
	err = bind_socket(c);
	if (err) {
		collectors__free(c);
		return err;
	}
	*out = c;
	return 0;
}

void collectors__free(struct collectors *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		collector_free(c->v[i]);
	free(c->v);
	free(c->pfd);
	free(c->env);
	if (c->sock.fd >= 0) {
		close(c->sock.fd);
		unlink(c->path);
	}
	free(c);
}

size_t collectors__count(const struct collectors *c)
{
	return c ? c->n : 0;
}

const struct collector *collectors__get(const struct collectors *c, size_t i)
{
	return c->v[i];
}

void collectors__stats(const struct collectors *c, struct collectors_stats *st)
{
	if (c)
		*st = c->st;
	else
		*st = (struct collectors_stats){ 0 };
}

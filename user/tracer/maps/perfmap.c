// SPDX-License-Identifier: MIT
/*
 * perfmap.c - a process's /tmp/perf-PID.map, read as it grows (see
 * perfmap.h; format: perf's tools/perf/Documentation/jit-interface.txt).
 *
 * Lines are kept in the order read (their number is their age) in chunks
 * that never move, so names and numbers stay valid. Look-ups go to a
 * sorted array of disjoint segments, each named by the newest line that
 * covers it (a painter's sweep over the lines, newest on top), and to the
 * lines read since it was built, newest first: at most PENDING_MAX of
 * them before they are swept in, so a file that grows while it is looked
 * up costs neither a rebuild per read nor a long scan.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfmap.h"

#define CHUNK_ENTRIES	4096		/* lines per chunk */
#define NAME_CHUNK	(64 * 1024)	/* bytes of names per chunk (> PERF_MAP_LINE) */
#define PENDING_MAX	256		/* lines looked up one by one before a sweep */
#define READ_SIZE	(64 * 1024)

struct line {
	uint64_t start, end;
	const char *name;
};

/* [start, end) is named by line @id. */
struct seg {
	uint64_t start, end;
	uint32_t id;
};

struct name_chunk {
	struct name_chunk *next;
	size_t used;
	char data[NAME_CHUNK];
};

struct perf_map {
	pid_t pid;
	struct line **chunks;		/* line i: chunks[i / CHUNK_ENTRIES][i % ...] */
	uint32_t n;			/* lines */
	size_t nchunks;
	struct name_chunk *names;	/* newest first */
	struct seg *segs;		/* sorted, disjoint: lines [0, swept) */
	size_t nsegs;
	uint32_t swept;			/* lines in segs; [swept, n) are pending */
	uint64_t off;			/* bytes of the file taken */
	int fd;				/* the file, open once found; -1 */
	bool tried;			/* ... looked for at open_ns */
	uint64_t open_ns;		/* (CLOCK_MONOTONIC) */
	bool skipping;			/* inside a line too long, to its newline */
	struct perf_map_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct line *line_at(const struct perf_map *pm, uint32_t id)
{
	return &pm->chunks[id / CHUNK_ENTRIES][id % CHUNK_ENTRIES];
}

struct perf_map *perf_map__new(pid_t pid)
{
	struct perf_map *pm = calloc(1, sizeof(*pm));

	if (pm) {
		pm->pid = pid;
		pm->fd = -1;
	}
	return pm;
}

/* Forget every line (the file was replaced or truncated). */
static void clear(struct perf_map *pm)
{
	struct name_chunk *c = pm->names, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	for (size_t i = 0; i < pm->nchunks; i++)
		free(pm->chunks[i]);
	free(pm->chunks);
	free(pm->segs);
	pm->chunks = NULL;
	pm->names = NULL;
	pm->segs = NULL;
	pm->n = pm->swept = 0;
	pm->nchunks = pm->nsegs = 0;
	pm->off = 0;
	pm->skipping = false;
}

void perf_map__free(struct perf_map *pm)
{
	if (!pm)
		return;
	clear(pm);
	if (pm->fd >= 0)
		close(pm->fd);
	free(pm);
}

static const char *keep_name(struct perf_map *pm, const char *s, size_t len)
{
	struct name_chunk *c = pm->names;
	char *d;

	if (!c || NAME_CHUNK - c->used < len + 1) {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->used = 0;
		c->next = pm->names;
		pm->names = c;
	}
	d = c->data + c->used;
	/* A name goes into the log as text: one line, no control characters. */
	for (size_t i = 0; i < len; i++)
		d[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	d[len] = '\0';
	c->used += len + 1;
	return d;
}

/* A hex number (an optional 0x, 1-16 digits) at *@p, then blanks. */
static bool hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (*v = 0; s < end; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;

		if (d < 0)
			break;
		if (digits == 16)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	if (!digits || s == end || (*s != ' ' && *s != '\t'))
		return false;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*p = s;
	return true;
}

/* Line @pm->n: [@start, @end) is the @len bytes at @s. Returns its id. */
static int64_t add(struct perf_map *pm, uint64_t start, uint64_t end, const char *s, size_t len)
{
	const char *name;
	struct line *l;

	if (pm->n == PERF_MAP_MAX_ENTRIES) {
		pm->st.capped = true;
		return -ENOSPC;
	}
	if (pm->n % CHUNK_ENTRIES == 0) {
		struct line **v = realloc(pm->chunks, (pm->nchunks + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pm->chunks = v;
		v[pm->nchunks] = malloc(CHUNK_ENTRIES * sizeof(struct line));
		if (!v[pm->nchunks])
			return -ENOMEM;
		pm->nchunks++;
	}
	name = keep_name(pm, s, len);
	if (!name)
		return -ENOMEM;
	l = line_at(pm, pm->n++);
	*l = (struct line){ .start = start, .end = end, .name = name };
	pm->st.entries++;
	return pm->n - 1;
}

/* One line, without its newline: taken, or counted as bad. */
static int take_line(struct perf_map *pm, const char *s, const char *end)
{
	uint64_t start, size;

	if (end > s && end[-1] == '\r')
		end--;
	if (!hex(&s, end, &start) || !hex(&s, end, &size) || s == end || !size ||
	    start + size < start) {
		pm->st.bad_lines++;
		return 0;
	}
	return add(pm, start, start + size, s, (size_t)(end - s)) == -ENOMEM ? -ENOMEM : 0;
}

/*
 * The painter's sweep: every line's range at its age, the newest on top,
 * cut into disjoint segments each named by its top line. The old
 * segments stand for lines [0, swept), older than every pending one.
 */
struct item {
	uint64_t start, end;
	uint32_t id;
};

struct event {
	uint64_t pos;
	uint32_t item;
	bool open;
};

static int by_pos(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* A max-heap of items by line id (the newest on top). */
static void heap_push(uint32_t *h, size_t *n, const struct item *it, uint32_t i)
{
	size_t k = (*n)++;

	h[k] = i;
	while (k && it[h[(k - 1) / 2]].id < it[h[k]].id) {
		uint32_t t = h[k];

		h[k] = h[(k - 1) / 2];
		h[(k - 1) / 2] = t;
		k = (k - 1) / 2;
	}
}

static void heap_pop(uint32_t *h, size_t *n, const struct item *it)
{
	size_t k = 0;

	h[0] = h[--*n];
	for (;;) {
		size_t c = 2 * k + 1, big = k;

		if (c < *n && it[h[c]].id > it[h[big]].id)
			big = c;
		if (c + 1 < *n && it[h[c + 1]].id > it[h[big]].id)
			big = c + 1;
		if (big == k)
			return;
		uint32_t t = h[k];

		h[k] = h[big];
		h[big] = t;
		k = big;
	}
}

static int sweep(struct perf_map *pm)
{
	size_t ni = pm->nsegs + (pm->n - pm->swept), ne = 2 * ni, nh = 0, ns = 0;
	struct item *it = malloc((ni ? ni : 1) * sizeof(*it));
	struct event *ev = malloc((ne ? ne : 1) * sizeof(*ev));
	uint32_t *heap = malloc((ni ? ni : 1) * sizeof(*heap));
	bool *closed = calloc(ni ? ni : 1, sizeof(*closed));
	struct seg *out = malloc((ne ? ne : 1) * sizeof(*out));
	int err = -ENOMEM;

	if (!it || !ev || !heap || !closed || !out)
		goto cleanup;
	for (size_t i = 0; i < pm->nsegs; i++)
		it[i] = (struct item){ pm->segs[i].start, pm->segs[i].end, pm->segs[i].id };
	for (uint32_t id = pm->swept, i = (uint32_t)pm->nsegs; id < pm->n; id++, i++) {
		const struct line *l = line_at(pm, id);

		it[i] = (struct item){ l->start, l->end, id };
	}
	for (size_t i = 0; i < ni; i++) {
		ev[2 * i] = (struct event){ it[i].start, (uint32_t)i, true };
		ev[2 * i + 1] = (struct event){ it[i].end, (uint32_t)i, false };
	}
	qsort(ev, ne, sizeof(*ev), by_pos);
	for (size_t e = 0; e < ne;) {
		uint64_t pos = ev[e].pos;

		for (; e < ne && ev[e].pos == pos; e++) {
			if (ev[e].open)
				heap_push(heap, &nh, it, ev[e].item);
			else
				closed[ev[e].item] = true;
		}
		while (nh && closed[heap[0]])
			heap_pop(heap, &nh, it);
		if (!nh || e == ne)
			continue;
		/* [pos, next event) is the top line's. */
		if (ns && out[ns - 1].end == pos && out[ns - 1].id == it[heap[0]].id)
			out[ns - 1].end = ev[e].pos;
		else
			out[ns++] = (struct seg){ pos, ev[e].pos, it[heap[0]].id };
	}
	free(pm->segs);
	pm->segs = out;
	pm->nsegs = ns;
	pm->swept = pm->n;
	out = NULL;
	err = 0;
cleanup:
	free(it);
	free(ev);
	free(heap);
	free(closed);
	free(out);
	return err;
}

size_t perf_map__feed(struct perf_map *pm, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end && !pm->st.capped) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (pm->skipping) {
			if (!nl)
				return len;
			pm->skipping = false;
			p = nl + 1;
			continue;
		}
		if (!nl) {
			/* A line still being written; or one too long, skipped. */
			if (end - p < PERF_MAP_LINE)
				break;
			pm->st.bad_lines++;
			pm->skipping = true;
			return len;
		}
		if (nl - p >= PERF_MAP_LINE)
			pm->st.bad_lines++;
		else if (take_line(pm, p, nl))
			break;	/* no memory: read again later */
		p = nl + 1;
		if (pm->n - pm->swept >= PENDING_MAX && sweep(pm))
			break;
	}
	return (size_t)(p - buf);
}

pid_t perf_map__ns_pid(pid_t pid)
{
	char fn[64], line[256];
	pid_t ns = pid;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/status", pid);
	f = fopen(fn, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *tab;

		if (strncmp(line, "NSpid:", 6))
			continue;
		tab = strrchr(line, '\t');
		if (tab)
			ns = (pid_t)strtol(tab + 1, NULL, 10);
		break;
	}
	fclose(f);
	return ns > 0 ? ns : pid;
}

/*
 * The file, opened as perfmap.h says: inside the process's root, not a
 * symbolic link, a regular file of the process's user (/proc/PID's owner).
 */
static int open_map(pid_t pid, struct stat *st)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW |
					 O_NOCTTY,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char root[64], name[64];
	struct stat owner;
	int dfd, fd;

	snprintf(root, sizeof(root), "/proc/%d", pid);
	if (stat(root, &owner))
		return -ENOENT;
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -ENOENT;
	snprintf(name, sizeof(name), "tmp/perf-%d.map", perf_map__ns_pid(pid));
	fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	close(dfd);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -ENOENT;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != owner.st_uid) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * Read what the file gained since the last read; the file is looked for
 * when it is not open yet and was not looked for less than @retry_ns ago.
 * Kept open once found: a look-up that finds nothing costs one fstat()
 * while the file has not grown, and the file stays readable after the
 * process has ended.
 */
static int refresh(struct perf_map *pm, uint64_t retry_ns)
{
	uint32_t before;
	struct stat st;
	char *buf;
	int err = 0;

	if (pm->fd < 0) {
		uint64_t now = now_ns();

		if (pm->tried && now - pm->open_ns < retry_ns)
			return 0;
		pm->tried = true;
		pm->open_ns = now;
		pm->fd = open_map(pm->pid, &st);
		if (pm->fd < 0) {
			err = pm->fd;
			pm->fd = -1;
			return err;
		}
	} else if (fstat(pm->fd, &st)) {
		return -errno;
	}
	/* Made shorter: another content, read from its start. */
	if ((uint64_t)st.st_size < pm->off) {
		clear(pm);
		pm->st.resets++;
	}
	if ((uint64_t)st.st_size == pm->off || pm->st.capped)
		return 0;
	before = pm->n;
	pm->st.reads++;
	buf = malloc(READ_SIZE);
	if (!buf)
		return -ENOMEM;
	while (!pm->st.capped) {
		ssize_t got = pread(pm->fd, buf, READ_SIZE, (off_t)pm->off);
		size_t took;

		if (got <= 0)
			break;
		if (pm->off + (uint64_t)got > PERF_MAP_MAX_BYTES) {
			pm->st.capped = true;
			break;
		}
		took = perf_map__feed(pm, buf, (size_t)got);
		pm->off += took;
		if (!took)
			break;	/* a line not yet whole */
	}
	free(buf);
	if (pm->n != pm->swept && sweep(pm))
		err = -ENOMEM;
	return err ? err : (int)(pm->n - before);
}

int perf_map__read(struct perf_map *pm)
{
	return refresh(pm, 0);
}

int perf_map__refresh(struct perf_map *pm, uint64_t retry_ns)
{
	return refresh(pm, retry_ns);
}

int64_t perf_map__add(struct perf_map *pm, uint64_t start, uint64_t end, const char *name,
		      size_t len)
{
	int64_t id;

	if (start >= end || len >= PERF_MAP_LINE)
		return -EINVAL;
	id = add(pm, start, end, name, len);
	if (id >= 0 && pm->n - pm->swept >= PENDING_MAX && sweep(pm))
		return -ENOMEM;
	return id;
}

uint32_t perf_map__count(const struct perf_map *pm)
{
	return pm->n;
}

/* The newest line holding @addr, or -1. */
static int64_t find(const struct perf_map *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->nsegs;

	for (uint32_t id = pm->n; id-- > pm->swept;) {
		const struct line *l = line_at(pm, id);

		if (addr >= l->start && addr < l->end)
			return id;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < pm->segs[mid].start)
			hi = mid;
		else if (addr >= pm->segs[mid].end)
			lo = mid + 1;
		else
			return pm->segs[mid].id;
	}
	return -1;
}

int perf_map__entry(const struct perf_map *pm, uint32_t id, struct perf_map_entry *out)
{
	const struct line *l;

	if (id >= pm->n)
		return -ENOENT;
	l = line_at(pm, id);
	*out = (struct perf_map_entry){ .start = l->start, .end = l->end, .name = l->name,
					.id = id };
	return 0;
}

int perf_map__find(const struct perf_map *pm, uint64_t addr, struct perf_map_entry *out)
{
	int64_t id = find(pm, addr);

	return id < 0 ? -ENOENT : perf_map__entry(pm, (uint32_t)id, out);
}

int perf_map__lookup(struct perf_map *pm, uint64_t addr, uint64_t retry_ns,
		     struct perf_map_entry *out)
{
	int64_t id = find(pm, addr);

	if (id < 0 && refresh(pm, retry_ns) > 0)
		id = find(pm, addr);
	if (id < 0)
		return -ENOENT;
	return perf_map__entry(pm, (uint32_t)id, out);
}

void perf_map__stats(const struct perf_map *pm, struct perf_map_stats *st)
{
	*st = pm->st;
}

/* SPDX-License-Identifier: MIT */
/*
 * collectors.h - the processes running the in-process collector
 * (libheapsnoop_preload.so, docs/COLLECTOR.md) whose live tables the
 * agent serves beside the BPF-traced processes (docs/AGENT.md, "Processes
 * that say hello").
 *
 * How they are found. A process started with HEAPSNOOP_AGENT=PATH in its
 * environment says hello to the agent's socket at PATH (a datagram,
 * user/collector/hello.c: its table's memfd and a pidfd, never waiting);
 * the agent also looks through /proc (at its start, then every
 * COLLECTORS_SCAN_S seconds) for processes whose environment names its
 * socket and that map a table (a memfd named livetable.h's
 * LT_MEMFD_NAME), opened through /proc/PID/map_files. So an agent killed
 * (SIGKILL too) and started again finds every table again, whole: the
 * tables live in the processes, not in the agent, and each segment of a
 * table is found by its name there too, never handed over.
 *
 * Everything read from a table is checked (livedump.h): a memfd must be
 * sealed against shrinking, its header must hold; a process may be
 * hostile.
 */
#ifndef HEAPSNOOP_AGENT_COLLECTORS_H
#define HEAPSNOOP_AGENT_COLLECTORS_H

#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livedump.h"

#define COLLECTORS_SOCK		"/run/heapsnoop/agent.sock"
#define COLLECTORS_SCAN_S	30	/* seconds between looks through /proc */
#define COLLECTORS_MAX		4096	/* processes held at most (more: counted, said) */
#define COLLECTORS_SAID		100	/* tables taken said on stderr, the first ones */

struct collectors;

/* One process's table, as the agent holds it. */
struct collector {
	pid_t pid;
	uint64_t start;			/* its start, clock ticks since boot (/proc/PID/stat) */
	uint64_t ino;			/* its table's memfd's inode: the same table found twice */
	int pidfd;
	void *map;			/* the table's memfd, read-only */
	uint64_t size;
	struct lt_view view;
	struct {
		void *p;
		uint64_t len;
	} seg[LT_NREGIONS * LT_SEGS];	/* segments past each region's first, mapped */
	unsigned int nsegs;
	char comm[16];
	char source[8];			/* "hello" or "proc": how it was found */
};

struct collectors_stats {
	uint64_t hellos;		/* hellos taken */
	uint64_t found;			/* tables found in /proc that no hello had brought */
	uint64_t refused;		/* hellos or tables refused (said once) */
	uint64_t ended;			/* processes that ended (their sets gone with them) */
	uint64_t over;			/* tables not held: COLLECTORS_MAX */
	uint64_t scans;			/* looks through /proc */
};

/*
 * The agent's socket at @path bound (its directory made 0755 if missing;
 * refused unless a directory owned by this user and written by nobody
 * else: no one else can put a link where the socket goes), mode 0666,
 * SO_PASSCRED; then a first look through /proc. Returns 0 and *@out, or
 * -errno (said).
 */
int collectors__open(const char *path, struct collectors **out);
void collectors__free(struct collectors *c);

/*
 * The loop's periodic step at @now (CLOCK_MONOTONIC s): hellos taken, the
 * ended processes let go, segments made since found, /proc looked
 * through every COLLECTORS_SCAN_S. Never waits.
 */
void collectors__tick(struct collectors *c, double now);

/* The tables held now: their count, the @i-th. */
size_t collectors__count(const struct collectors *c);
const struct collector *collectors__get(const struct collectors *c, size_t i);
void collectors__stats(const struct collectors *c, struct collectors_stats *st);

#endif /* HEAPSNOOP_AGENT_COLLECTORS_H */

/* SPDX-License-Identifier: MIT */
/*
 * perfmap.h - the names a JIT compiler gives its code in /tmp/perf-PID.map
 * (V8's --perf-basic-prof, LuaJIT built with LUAJIT_USE_PERFTOOLS, the
 * JVM's perf-map-agent, .NET's DOTNET_PerfMapEnabled), read for frames in
 * anonymous executable memory (mapset.h's MAPPING_ANON), which have no
 * file to name them.
 *
 * The format is perf's (tools/perf/Documentation/jit-interface.txt): one
 * line a function, "START SIZE NAME", START and SIZE in hex without 0x,
 * NAME to the end of the line. The file only grows; a range made again
 * (code freed and its memory reused) is named by its newest line.
 *
 * The file is the traced process's, in its root and under its own pid
 * (its pid namespace's: /proc/PID/root/tmp/perf-NSPID.map), and hostile:
 * opened inside that root (openat2 RESOLVE_IN_ROOT), never through a
 * symbolic link as its last component, only a regular file owned by the
 * process's user, without blocking; a line is at most PERF_MAP_LINE bytes
 * (longer ones are skipped), a name's control characters are written as
 * '?', and the whole file at most PERF_MAP_MAX_BYTES and
 * PERF_MAP_MAX_ENTRIES lines (what is past them is not read, and said).
 */
#ifndef HEAPSNOOP_PERFMAP_H
#define HEAPSNOOP_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERF_MAP_LINE		4096
#define PERF_MAP_MAX_BYTES	(128ull << 20)
#define PERF_MAP_MAX_ENTRIES	(1u << 20)

/* One line of the file: the code at [start, end) is @name. */
struct perf_map_entry {
	uint64_t start, end;
	const char *name;	/* lives as long as the perf_map */
	uint32_t id;		/* the line's number among those taken, from 0 */
};

struct perf_map_stats {
	uint64_t reads;		/* times the file was read (it had grown) */
	uint64_t entries;	/* lines taken */
	uint64_t bad_lines;	/* lines skipped: malformed or too long */
	uint64_t resets;	/* times the file was made shorter: every line
				 * forgotten, the numbers given again from 0 */
	bool capped;		/* stopped at PERF_MAP_MAX_BYTES or _ENTRIES */
};

struct perf_map;

/* @pid's perf map, nothing read yet; NULL: no memory. */
struct perf_map *perf_map__new(pid_t pid);
void perf_map__free(struct perf_map *pm);

/*
 * The line naming @addr (the newest one whose range holds it) into @out.
 * When none does, the lines the file gained since it was last read are
 * read first (the code was made after that); the file is open once found
 * (one fstat() tells whether it grew), and looked for again when it was
 * not there @retry_ns ago or more (0: always). Returns 0, or -ENOENT: no
 * line names @addr.
 */
int perf_map__lookup(struct perf_map *pm, uint64_t addr, uint64_t retry_ns,
		     struct perf_map_entry *out);

/* The same among the lines read so far, reading nothing. */
int perf_map__find(const struct perf_map *pm, uint64_t addr, struct perf_map_entry *out);

/* Line @id (perf_map_entry.id) into @out; -ENOENT if there is none. */
int perf_map__entry(const struct perf_map *pm, uint32_t id, struct perf_map_entry *out);

/*
 * Read the lines the file gained since the last read (looking for it if
 * it is not open yet). Returns how many were taken; -ENOENT: no such file
 * (the process writes none, or has ended before it was found); -EPERM:
 * not a regular file owned by the process's user; -ENOMEM.
 */
int perf_map__read(struct perf_map *pm);

/* perf_map__read() when the file is open, or was looked for @retry_ns ago or more. */
int perf_map__refresh(struct perf_map *pm, uint64_t retry_ns);

/*
 * A line that is not the file's: [@start, @end) is the @len bytes at
 * @name (jitdump.c keeps its code's names so, and has them named the
 * same way: the newest wins). Returns its id; -EINVAL (an empty range, a
 * name of PERF_MAP_LINE bytes or more), -ENOSPC (PERF_MAP_MAX_ENTRIES
 * lines), -ENOMEM.
 */
int64_t perf_map__add(struct perf_map *pm, uint64_t start, uint64_t end, const char *name,
		      size_t len);

/* Lines taken (ids 0 to this, less one), since the last reset. */
uint32_t perf_map__count(const struct perf_map *pm);

/*
 * Parse @len bytes of the file's content as read at its offset @pm has
 * reached (whole lines only: returns how many bytes it took, the last
 * line without a newline left for the next read). For the tests and for
 * perf_map__read().
 */
size_t perf_map__feed(struct perf_map *pm, const char *buf, size_t len);

/* @pid in its own pid namespace (/proc/PID/status's NSpid's last field): the
 * pid its files are named by; @pid itself when it cannot be read. */
pid_t perf_map__ns_pid(pid_t pid);

void perf_map__stats(const struct perf_map *pm, struct perf_map_stats *st);

#endif /* HEAPSNOOP_PERFMAP_H */

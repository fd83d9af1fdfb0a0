/* SPDX-License-Identifier: MIT */
/*
 * procmaps.h - the executable file mappings of a process, from
 * /proc/PID/maps, with each file's GNU build ID (read through
 * /proc/PID/map_files, so it is the mapped file's even if the path has
 * since been replaced or deleted). What heapsnoop writes as `map` records
 * and what the symbolizer needs to turn an address into (module, ELF
 * address) on another machine.
 */
#ifndef HEAPSNOOP_PROCMAPS_H
#define HEAPSNOOP_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buildid.h"
#include "elfsym.h"

struct mapping {
	uint64_t start, end;	/* [start, end) virtual addresses */
	uint64_t offset;	/* file offset of start */
	uint64_t dev, ino;	/* the file's st_dev, st_ino; 0 if not known */
	char build_id[BUILD_ID_HEX_SIZE];	/* hex, or "-" */
	char *path;		/* as the process sees it */
};

struct proc_maps {
	pid_t pid;
	size_t n;
	struct mapping *v;	/* sorted by start */
};

/*
 * Read the executable file-backed mappings of @pid (and [vdso]), build IDs
 * through the cache @bc (each file read once).
 * Returns 0; -ESRCH if the process is gone; -EACCES; -ENOMEM.
 */
int proc_maps__load(pid_t pid, struct buildid_cache *bc, struct proc_maps **out);
/* The same without build IDs (build_id ""): cheap, for scanning. */
int proc_maps__load_files(pid_t pid, struct proc_maps **out);
void proc_maps__free(struct proc_maps *pm);

/* An empty set of mappings for @pid, filled by proc_maps__add. */
struct proc_maps *proc_maps__new(pid_t pid);

/*
 * Add a copy of @m (path duplicated), keeping the set sorted; a mapping
 * overlapping an existing one replaces it. Returns 0 or -ENOMEM.
 */
int proc_maps__add(struct proc_maps *pm, const struct mapping *m);

/*
 * Parse a `heapsnoop: map pid=P start=0x.. end=0x.. off=0x.. buildid=H
 * path=PATH` record (docs/OUTPUT.md) found anywhere in @line.
 * Returns 0 and fills *@pid and @m (m->path points into @line); -EINVAL.
 */
int proc_maps__parse_record(const char *line, pid_t *pid, struct mapping *m);

/*
 * A path, reachable from here, to the file @pid maps at @m: the first of
 * /proc/PID/map_files/START-END, /proc/PID/root/PATH and PATH that stat()s
 * as that very file (m->dev, m->ino; any file if m->dev is 0), into @path
 * (@cap bytes; PATH_MAX is enough). Works for other mount namespaces and,
 * through PATH, for a process that has exited.
 * Returns 0 or -ENOENT.
 */
int proc_maps__reach(pid_t pid, const struct mapping *m, char *path, size_t cap);

/* Fill @m->build_id (a file found by proc_maps__reach, through @bc). */
void proc_maps__build_id(pid_t pid, struct mapping *m, struct buildid_cache *bc);

/* The mapping holding @addr, or NULL. */
const struct mapping *proc_maps__find(const struct proc_maps *pm, uint64_t addr);

/* Is @path's file name that of a C library (the names below)? */
bool proc_maps__is_libc(const char *path);

/*
 * Find the mapped file whose name looks like a C library (libc.so.6,
 * libc-2.x.so, libc.musl-*.so.1, ld-musl-*.so.1) and write its path as
 * reachable from here (through /proc/PID/root) into @path.
 * Returns 0 or -ENOENT.
 */
int proc_maps__find_libc(pid_t pid, char *path, size_t cap);

#endif /* HEAPSNOOP_PROCMAPS_H */

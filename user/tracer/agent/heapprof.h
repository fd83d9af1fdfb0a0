/* SPDX-License-Identifier: MIT */
/*
 * heapprof.h - the agent's /debug/pprof/heap: the tracker's live set and
 * the whole run's counts, per process and stack (track/acct.h), as a
 * pprof profile built with heapdecode's builder (profbuild.h), so that
 * `go tool pprof`, Parca and Pyroscope read it as they read Go's heap
 * profile: the sample types alloc_objects, alloc_space, inuse_objects,
 * inuse_space, in Go's order, inuse_space the default.
 *
 * Run in the agent's forked child (user/tracer/agent.c) on its copy-on-write
 * snapshot: it reads the trace, never changes it.
 */
#ifndef HEAPSNOOP_AGENT_HEAPPROF_H
#define HEAPSNOOP_AGENT_HEAPPROF_H

#include <stdio.h>
#include <sys/types.h>

/*
 * Naming frames stops after this many seconds (a busy machine's every
 * stack): the frames left keep their mapping (path, build ID) and
 * address, named "file+0xOFFSET", for the backend to symbolize.
 */
#define HEAPPROF_NAMING_S 10

struct collectors;
struct trace;

/*
 * Write the live heap of @t's processes and of the collectors' tables
 * (heapprof__set_collectors()) (@pid's only, 0: every one) to @out,
 * gzip-compressed.
 * Each stack with live or allocated bytes is a sample labelled pid, comm
 * and source (bpf, collector: a collector's table keeps no totals, its
 * alloc values are 0); its frames are symbolized here (the
 * files of the mappings, read through the paths the process sees) and
 * carry their mapping's path and build ID, so a backend can name what
 * the agent could not. With --sample-bytes the byte values are the
 * sampled blocks' estimates and the object counts are of sampled blocks
 * (heapsnoop's rule, docs/OUTPUT.md). Returns 0, -ENOMEM or -EIO.
 */
int heapprof__write(struct trace *t, pid_t pid, FILE *out);

/* As heapprof__write(), only the processes named @comm (NULL or "": every one). */
int heapprof__write_for(struct trace *t, pid_t pid, const char *comm, FILE *out);

/*
 * The collectors' tables (collectors.h) that heapprof__write() adds to
 * every profile from now on (the /debug/pprof/heap page's, a push's);
 * NULL: none.
 */
void heapprof__set_collectors(const struct collectors *c);

#endif /* HEAPSNOOP_AGENT_HEAPPROF_H */

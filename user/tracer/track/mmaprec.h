/* SPDX-License-Identifier: MIT */
/*
 * mmaprec.h - every process's executable mappings, as the kernel reports
 * them: perf's own mapping records (PERF_RECORD_MMAP2, COMM with exec,
 * FORK) from one dummy software event per CPU, read through libbpf's raw
 * perf buffer. The kernel writes each record inside mmap(), exec() and
 * fork() themselves, so a process that exits a millisecond later is still
 * described; reading /proc/PID/maps after its first allocation would lose
 * that race (docs/DESIGN.md, "System-wide mode").
 *
 * Records from all CPUs are applied to the trace (trace__map_*) in time
 * order: a fork before its child's exec before the new image's mappings.
 * Without a trace (-p, -f: libcfollow.c) they only name the files
 * mapped, and the processes forked (FORK) and ended (EXIT).
 */
#ifndef HEAPSNOOP_MMAPREC_H
#define HEAPSNOOP_MMAPREC_H

#include <stdint.h>
#include <sys/types.h>

#include "trace.h"

struct bpf_map;
struct mmaprec;

struct mmaprec_opts {
	/* NULL: the records only go to on_file (-p, -f: their new C libraries). */
	struct trace *trace;
	/* Called for each new file mapping, once applied. */
	void (*on_file)(void *ctx, pid_t pid, const struct mapping *m);
	/*
	 * trace NULL: each process forked (@pid by @ppid) or ended (@ppid 0),
	 * in time order with on_file's mappings.
	 */
	void (*on_task)(void *ctx, pid_t pid, pid_t ppid);
	void *ctx;
};

/*
 * Open the per-CPU events into @array (a BPF_MAP_TYPE_PERF_EVENT_ARRAY of
 * the loaded object) with @pages pages of buffer each (a power of two).
 * Returns 0; -EACCES/-EPERM without CAP_PERFMON; -errno of perf_event_open.
 */
int mmaprec__new(const struct bpf_map *array, size_t pages, const struct mmaprec_opts *o,
		 struct mmaprec **out);
void mmaprec__free(struct mmaprec *mr);

/*
 * Apply every record waiting in the buffers. Returns how many, or -ENOMEM
 * (records were dropped and counted).
 */
int mmaprec__drain(struct mmaprec *mr);

/* Records the kernel could not write (buffer full), or we could not keep. */
uint64_t mmaprec__lost(const struct mmaprec *mr);

#endif /* HEAPSNOOP_MMAPREC_H */

/* SPDX-License-Identifier: MIT */
/*
 * bpfload.h - the BPF side, from nothing to loaded: what the kernel must
 * offer (checked before libbpf, to say it plainly), the skeleton of
 * bpf/heapsnoop.bpf.c opened, its read-only data set from what it is
 * asked to trace (struct bpfload_opts, the session's options), loaded,
 * and the maps that must be filled before the first probe fires.
 * Attaching is attach.c's and the session's.
 */
#ifndef HEAPSNOOP_BPFLOAD_H
#define HEAPSNOOP_BPFLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct heapsnoop_bpf;

/* How the BPF side traces, set before it is loaded (options.h says each). */
struct bpfload_opts {
	bool verbose;			/* -v: libbpf's debug lines, the features probed */
	unsigned int without;		/* --without: kfeatures.h's bits */
	bool all;			/* -a */
	bool follow_forks;		/* -f */
	bool dwarf;			/* --unwind dwarf: records carry registers and stack */
	unsigned int stack_copy;	/* --stack-copy, bytes */
	unsigned int max_frames;	/* frames to walk or unwind (trace_max_frames()) */
	unsigned int fallback_frames;	/* --unwind fp: the walk for a verifier that
					 * refuses max_frames' (0: none) */
	unsigned long ringbuf_bytes;	/* --ringbuf-size */
	bool hold;			/* the traced processes wait at a quarter of it */
	bool shed;			/* ... or allocations are sampled past it */
	bool tails;			/* dwarf: deep stacks' tails checked in place (tail.h) */
	unsigned int thread_slots;	/* --thread-slots, a power of two */
	bool empty_probes, empty_read;	/* --empty-probes[=read] */
	const char *comm;		/* --comm, or NULL */
	long uid;			/* --uid, -1: any */
	const uint32_t *pids;		/* --pid-filter, npids of them */
	unsigned int npids;
	uint64_t min_size, max_size;	/* --min-size, --max-size */
	uint64_t sample_bytes;		/* --sample-bytes, 0: every allocation */
	bool interp;			/* --interp: any interpreter's frames read */
};

/*
 * The kernel features heapsnoop cannot do without (BTF, uprobes), from
 * /sys. Returns 0, or -ENOTSUP after saying which is missing.
 */
int bpfload__preflight(void);

/*
 * Probe the running kernel's BPF features (kfeatures.c; -v prints them),
 * open, configure (rodata, ring buffer size, the programs and map types
 * this kernel can take, less --without) and load the BPF object for @o,
 * then fill --pid-filter's map. libbpf's messages go to standard error,
 * its debug ones only with -v. --unwind fp: where the verifier refuses the
 * walk of @o->max_frames frames (Linux 5.10's), loaded again with
 * @o->fallback_frames', said on standard error.
 * Returns 0 and the skeleton in *@out (heapsnoop_bpf__destroy() it), or
 * -errno after saying why (a missing privilege, a feature the kernel
 * lacks, the verifier's rejection).
 */
int bpfload__open(const struct bpfload_opts *o, struct heapsnoop_bpf **out);

/*
 * -p and launch mode: @pid is the target, whose forks the BPF side
 * reports (and with -f follows). Before the target can fork. Returns 0 or
 * -errno, said.
 */
int bpfload__trace_pid(struct heapsnoop_bpf *skel, pid_t pid);

/*
 * -a --comm NAME: every running process whose name (/proc/PID/comm) is
 * @name into the BPF side's table of processes so named; after the fork
 * and exec tracepoints are attached, so that a process started or
 * renamed by exec meanwhile is decided by them or by this scan, never by
 * neither. Returns how many were found, or -errno, said.
 */
int bpfload__trace_named(struct heapsnoop_bpf *skel, const char *name);

#endif /* HEAPSNOOP_BPFLOAD_H */

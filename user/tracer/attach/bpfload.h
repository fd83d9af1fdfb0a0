/* SPDX-License-Identifier: MIT */
/*
 * bpfload.h - the BPF side, from nothing to loaded: what the kernel must
 * offer (checked before libbpf, to say it plainly), the skeleton of
 * bpf/heapsnoop.bpf.c opened, its read-only data set from the options,
 * loaded, and the maps that must be filled before the first probe fires.
 * Attaching is attach.c's and the session's.
 */
#ifndef HEAPSNOOP_BPFLOAD_H
#define HEAPSNOOP_BPFLOAD_H

#include <sys/types.h>

#include "options.h"

struct heapsnoop_bpf;

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
 * its debug ones only with -v.
 * Returns 0 and the skeleton in *@out (heapsnoop_bpf__destroy() it), or
 * -errno after saying why (a missing privilege, a feature the kernel
 * lacks, the verifier's rejection).
 */
int bpfload__open(const struct options *o, struct heapsnoop_bpf **out);

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

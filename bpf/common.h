/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * common.h - what every file of the BPF side builds on: the kernel's types
 * (vmlinux/ARCH/vmlinux.h), libbpf's BPF headers, the record layout shared
 * with the loader (include/heapsnoop/event.h) and the architecture's reads
 * (arch.h).
 *
 * Owns no map.
 */
#ifndef HEAPSNOOP_BPF_COMMON_H
#define HEAPSNOOP_BPF_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* One load or store the compiler neither drops, splits nor moves. */
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

#include "heapsnoop/event.h"
#include "arch.bpf.h"

#endif /* HEAPSNOOP_BPF_COMMON_H */

/* SPDX-License-Identifier: MIT */
/*
 * pprof.h - heapdecode --pprof: the live set of the dump heapdecode
 * describes as a gzip-compressed pprof profile (profile.proto), which
 * `go tool pprof`, Pyroscope, Parca and Grafana read. Sample types and
 * where each field comes from: docs/OUTPUT.md, "heapdecode --pprof".
 *
 *   inuse_objects, inuse_space   the dump's `live` records (and the exit
 *                                sections before it), per stack
 *   alloc_objects, alloc_space   the whole-run `stack` records up to the
 *                                dump (allocs, allocated), when the log
 *                                has them
 *
 * Every frame is a Location (address, Mapping from the `map` records)
 * whose Lines heapdecode symbolized itself, inlined functions first, so
 * pprof needs no binaries. Each sample has a `pid` label (and `comm`);
 * a FILE with "%p" gets one profile per process.
 */
#ifndef HEAPDECODE_PPROF_H
#define HEAPDECODE_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct hd_pprof_opts {
	bool pid_root;	/* --by pid: a root frame "pid N (comm)" per process */
	uint32_t pid;	/* only this process's samples; 0: every process's */
};

/*
 * Write @m's selected dump (differences, with a baseline subtracted) as a
 * gzip-compressed profile to @out. Returns 0, -ENOMEM or -EIO.
 */
int hd_pprof__write(struct hd_model *m, const struct hd_pprof_opts *o, FILE *out);

/*
 * One profile per process: each to @pattern with its "%p" replaced by
 * the pid, created as outfile.h creates files. Returns 0, or -1 after
 * saying what failed.
 */
int hd_pprof__write_each(struct hd_model *m, const struct hd_pprof_opts *o, const char *pattern);

#endif /* HEAPDECODE_PPROF_H */

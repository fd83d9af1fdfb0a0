/* SPDX-License-Identifier: MIT */
/*
 * env.h - the environment variables heapsnoop's programs read, each name
 * written once: the in-process collector's settings, which heapsnoop
 * --preload sets from its options (user/tracer/preload.c) and a user may
 * set by hand beside LD_PRELOAD (docs/COLLECTOR.md's table), and where
 * --preload finds the collector. A variable's value is read where its
 * name is used.
 */
#ifndef HEAPSNOOP_ENV_H
#define HEAPSNOOP_ENV_H

/* The collector's records to this file ("%p": the pid), appended; unset: stderr. */
#define HS_ENV_OUTPUT		"HEAPSNOOP_OUTPUT"
/* A dump every this many seconds (reason "interval"); --preload's -i. */
#define HS_ENV_INTERVAL		"HEAPSNOOP_INTERVAL"
/* A dump when this signal (a number) arrives (reason "usr1"); --preload: SIGUSR1. */
#define HS_ENV_SIGNAL		"HEAPSNOOP_SIGNAL"
/* Sampling by bytes, this mean; --sample-bytes. */
#define HS_ENV_SAMPLE_BYTES	"HEAPSNOOP_SAMPLE_BYTES"
/* The sampler's seed, for repeatable runs; --seed. */
#define HS_ENV_SEED		"HEAPSNOOP_SEED"
/* "fp": the collector walks frame pointers, not CFI; --unwind fp. */
#define HS_ENV_UNWIND		"HEAPSNOOP_UNWIND"
/*
 * Set by --preload when the collector is heapsnoop's embedded copy: the
 * memfd it came through (a number), or the private file written when
 * there is no /proc; the collector's constructor closes or removes it.
 */
#define HS_ENV_PRELOAD_FD	"HEAPSNOOP_PRELOAD_FD"
#define HS_ENV_PRELOAD_TMP	"HEAPSNOOP_PRELOAD_TMP"
/* --preload: the collector library to load, before any other place. */
#define HS_ENV_PRELOAD_LIB	"HEAPSNOOP_PRELOAD_LIB"

#endif /* HEAPSNOOP_ENV_H */

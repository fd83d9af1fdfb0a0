/* SPDX-License-Identifier: MIT */
/*
 * env.h - the environment variables heapsnoop's programs read, each name
 * written once: the in-process collector's settings, which heapsnoop
 * --preload sets from its options (user/tracer/preload/plrun.c) and a user may
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
/* The innermost and outermost frames each stack drops; --snip-pre, --snip-post (33 at most). */
#define HS_ENV_SNIP_PRE		"HEAPSNOOP_SNIP_PRE"
#define HS_ENV_SNIP_POST	"HEAPSNOOP_SNIP_POST"
/*
 * Set by --preload: heapsnoop's abstract socket (its name, without the
 * leading NUL) and the token a hello carries, where a process hands its
 * live table over (include/heapsnoop/livetable.h, user/collector/hello.c).
 */
#define HS_ENV_SOCK		"HEAPSNOOP_SOCK"
#define HS_ENV_TOKEN		"HEAPSNOOP_TOKEN"
/*
 * Set by hand (a unit's Environment=): the path of heapsnoop agent's
 * socket (/run/heapsnoop/agent.sock by default), where a process that
 * writes its own dumps also says hello (user/collector/hello.c,
 * docs/AGENT.md).
 */
#define HS_ENV_AGENT		"HEAPSNOOP_AGENT"
/*
 * heapsnoop --preload --interp python,lua (the default): the collector
 * reads a CPython's ("python") and a PUC Lua's ("lua") frames at each
 * allocation it records (a list; unset or neither: native frames only).
 */
#define HS_ENV_INTERP		"HEAPSNOOP_INTERP"
/* The most live blocks the live table grows to (docs/COLLECTOR.md; unset: no bound): for tests. */
#define HS_ENV_TABLE_ENTRIES	"HEAPSNOOP_TABLE_ENTRIES"
/* --preload: the collector library to load, before any other place. */
#define HS_ENV_PRELOAD_LIB	"HEAPSNOOP_PRELOAD_LIB"

#endif /* HEAPSNOOP_ENV_H */

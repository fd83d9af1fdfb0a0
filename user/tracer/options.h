/* SPDX-License-Identifier: MIT */
/*
 * options.h - heapsnoop's command line: the usage text, parsing and
 * validation into one struct options, which everything else only reads.
 */
#ifndef HEAPSNOOP_OPTIONS_H
#define HEAPSNOOP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "leakgate.h"

#define OPTIONS_MAX_PIDS 64	/* --pid-filter */
#define KEEP_STACKS_DEFAULT_MB 64	/* --keep-stacks without its MiB */
#define OPT_INTERP_PYTHON (1u << 0)	/* --interp python */
#define OPT_INTERP_LUA (1u << 1)	/* --interp lua */

struct options {
	pid_t pid;		/* -p, or the launched command's once started */
	char **argv;		/* launch mode: the command */
	const char *user;	/* -u: the command runs as this user */
	bool follow_forks;	/* -f: the target's children too */
	const char *output;	/* -o, NULL: standard output */
	bool append;		/* -A: -o's file appended to */
	const char *allocator;	/* --allocator PATH */
	unsigned int interval;	/* seconds, 0: none */
	unsigned int sample_ms;	/* --sample-ms: live bytes every MS, 0: none */
	unsigned int summary;	/* top N, 0: none */
	unsigned int top;	/* --top: the live view's seconds, 0: none */
	bool full_stacks;	/* --full-stacks: -s's stacks not cut below main */
	unsigned int snip_pre, snip_post;
	unsigned long ringbuf_mb;
	unsigned int thread_slots;	/* --thread-slots, a power of two */
	bool verbose, quiet, empty_probes;
	bool empty_read;	/* --empty-probes=read */
	bool unwind_fp;		/* --unwind fp; default dwarf */
	unsigned int stack_copy;	/* --stack-copy bytes */
	bool no_tails;		/* --no-tails: the whole stack copied every time */
	/* --keep-stacks: MiB of live blocks' stack copies kept for `ustack` records; 0: none */
	unsigned long keep_stacks_mb;
	/* --unwind-threads: beside the loop's; -1: one per CPU but two, up to 16 */
	int unwind_threads;
	/*
	 * --on-full: when heapsnoop falls behind, the traced processes wait
	 * (hold: -p and a command by default, attach/hold.h), allocations are
	 * recorded as samples of known weight (sample: -a by default,
	 * bpf/alloc.h shed_keep), or events are dropped, counted (drop).
	 */
	enum { OPT_ON_FULL_DEFAULT, OPT_ON_FULL_HOLD, OPT_ON_FULL_SAMPLE,
	       OPT_ON_FULL_DROP } on_full;
	/* -a and the filters */
	bool all, leaks_at_exit;
	const char *comm;
	uint32_t pids[OPTIONS_MAX_PIDS];
	unsigned int npids;
	long uid;		/* -1: any */
	uint64_t min_size, max_size;
	unsigned int without;	/* --without: kfeatures.h's bits */
	/* --preload: the in-process collector instead of BPF (preload.c) */
	bool preload;
	uint32_t bpf_only;	/* options given that --preload refuses (options.c) */
	uint64_t sample_bytes;	/* --sample-bytes, 0: every allocation */
	uint64_t seed;		/* --seed, 0: the collector picks one */
	/* --interp: the interpreters whose frames are read (OPT_INTERP_*) */
	unsigned int interp;
	bool interp_asked;	/* --interp was given (not the default) */
	bool no_perf_map;	/* --no-perf-map: JIT frames not named */
	/* --fail-on-leak, --suppressions, --max-peak (gate.h) */
	struct leakgate_opts gate;
};

/*
 * Parse @argc/@argv (getopt_long; @argv's --pid-filter argument is cut
 * up in place and the command stays in @argv) into @o, defaults first.
 * -h and -V print and exit(0). Returns 0, or -EINVAL after saying why
 * (msg.h); the caller adds the "Try --help" line.
 */
int options__parse(int argc, char **argv, struct options *o);

#endif /* HEAPSNOOP_OPTIONS_H */

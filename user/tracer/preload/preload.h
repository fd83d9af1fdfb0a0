/* SPDX-License-Identifier: MIT */
/*
 * preload.h - `heapsnoop --preload -- CMD`: no BPF; the command runs with
 * the in-process collector (libheapsnoop_preload.so, docs/COLLECTOR.md)
 * preloaded, and heapsnoop stays beside it as the collector's
 * supervisor: every process image the command makes hands heapsnoop its
 * live table, and heapsnoop writes the dumps, however each process ends
 * (exit, _exit, a signal, kill -9).
 */
#ifndef HEAPSNOOP_PRELOAD_H
#define HEAPSNOOP_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What --preload takes of heapsnoop's options (heapsnoop.c fills it from
 * struct options: this folder does not include the session's options.h,
 * so the tracer's top uses preload/ and not the other way round).
 */
struct preload_opts {
	char **argv;			/* the command */
	const char *output;		/* -o, NULL: standard output */
	unsigned int interval;		/* -i, seconds; 0: none */
	unsigned int summary;		/* -s's top N, 0: none */
	bool full_stacks;		/* --full-stacks: -s's stacks not cut below main */
	bool default_supp;		/* -s leaves the C runtime's own stacks out */
	bool verbose;
	bool unwind_fp;			/* --unwind fp */
	unsigned int snip_pre, snip_post;
	uint64_t sample_bytes;		/* --sample-bytes, 0: every allocation */
	uint64_t seed;			/* --seed, 0: the collector picks one */
	bool python, lua;		/* --interp: the runtimes whose frames are read */
};

/*
 * Run @o's command under the collector configured from @o (-o, -i,
 * --unwind fp, --sample-bytes, --seed, -v) until it and every process it
 * made have ended; SIGUSR1 to heapsnoop dumps every running process.
 * Returns the exit status: the command's (128 + N for a signal N); 3 if
 * anything was not recorded (said); 1 on an error; 127 if the command
 * could not run.
 */
int preload__run(const struct preload_opts *o);

#endif /* HEAPSNOOP_PRELOAD_H */

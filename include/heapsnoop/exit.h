/* SPDX-License-Identifier: MIT */
/*
 * exit.h - the exit statuses of heapsnoop and heapdecode, each defined
 * once: the ones heapsnoop --help, the README, docs/OUTPUT.md and the man
 * pages list, and CI scripts test for. A status the table does not name
 * (0, and heapsnoop's "the command's own") is the program's; the first
 * that applies is the one returned (user/tracer/shutdown.c,
 * user/tracer/output/tracegate.c; user/decode/heapdecode.c).
 */
#ifndef HEAPSNOOP_EXIT_H
#define HEAPSNOOP_EXIT_H

/* heapsnoop: an error (a bad option, nothing to trace, a write that failed). */
#define HS_EXIT_ERROR		1
/*
 * heapsnoop: the records are incomplete, in every mode: events or mapping
 * records were lost, or an image the command exec'd had no allocator to
 * probe. A gate's verdict is then not trusted.
 */
#define HS_EXIT_LOST		3
/*
 * Both programs' gates: --fail-on-leak, more bytes leaked than allowed,
 * not suppressed (LeakSanitizer's own exit code); --max-peak, a
 * process's peak above the bytes allowed (when no leak gate broke).
 */
#define HS_EXIT_LEAK		23
#define HS_EXIT_PEAK		24
/* heapsnoop's launch mode: the command killed by signal @sig, as a shell says it. */
#define HS_EXIT_SIGNALED(sig)	(128 + (sig))
/* heapsnoop: the command could not be run (a shell's 127): launch mode, --preload. */
#define HS_EXIT_NOEXEC		127

/* heapdecode: records were malformed (ignored, or left as they were by the filter). */
#define HD_EXIT_MALFORMED	1
/* heapdecode: a usage or I/O error. */
#define HD_EXIT_ERROR		2
/*
 * heapdecode: no frame could be named: every address looked up in a
 * module's file (a map record's, or -e FILE) named no function (the
 * files not found, not the traced ones, or without symbols). Said on
 * stderr; the output is written all the same.
 */
#define HD_EXIT_UNNAMED		3

#endif /* HEAPSNOOP_EXIT_H */

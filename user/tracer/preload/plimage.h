/* SPDX-License-Identifier: MIT */
/*
 * plimage.h - the process images heapsnoop --preload holds: each one's
 * live table (read-only mappings of the memfd its hello brought and of
 * each segment handed over since) and its pidfd, from its hello to its
 * end; and the records written of them
 * (docs/OUTPUT.md), through the same async-signal-safe writer the
 * collector's own last dumps use (livedump.h):
 *   - an image that ends with live blocks gets an exit section at once
 *     (exit ... end-exit, as the tracer's --leaks-at-exit), except the last
 *     one to end, whose live set is the final dump (dump reason=exit): a
 *     command of one process gives the same dump as the tracer's launch
 *     mode, a forking one every process's end;
 *   - SIGUSR1 and -i: one dump of every image still running, each table
 *     walked while its process runs (no stop);
 *   - an image replaced by exec (its pid says hello again) is dropped,
 *     as the tracer drops it; one that exec'd into a program without the
 *     collector (it ends with its exec mark set) is said and counted;
 *   - what no table holds is counted: entries, stacks or modules for
 *     which a table could not grow, forked children that ended before
 *     their hello, hellos refused (a collector of another version said
 *     as one), segments refused or never handed over, images not
 *     traced: exit status 3.
 */
#ifndef HEAPSNOOP_PLIMAGE_H
#define HEAPSNOOP_PLIMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "frametab.h"
#include "output/summary.h"
#include "plsock.h"

struct plimages;

/*
 * A new set writing to @fd (records only; flushed by each section), the
 * hellos of @sock taken meanwhile by long dumps; -v's lines if @verbose;
 * interpreter frames named (interp/plread.h) if @python. NULL without memory.
 */
struct plimages *plimages__new(int fd, struct plsock *sock, bool verbose, bool python);
void plimages__free(struct plimages *ims);

/*
 * Every message on the socket taken: hellos (a new image, a fork's
 * child, an image after exec), segments of the images' tables; one of
 * another version said and counted, one refused counted and said once.
 */
void plimages__take(struct plimages *ims);

/* A message refused by the socket: counted, said once. */
void plimages__refused(struct plimages *ims);

/* The images still running: their count, and the pidfd of the @i-th. */
size_t plimages__alive(const struct plimages *ims);
int plimages__pidfd(const struct plimages *ims, size_t i);

/* The @i-th running image has ended (its pidfd is readable). */
void plimages__ended(struct plimages *ims, size_t i);

/*
 * The running images' new stacks named (Python frames) while they run:
 * as often as plimages__python() says it is wanted.
 */
void plimages__scan(struct plimages *ims);
/* Are there images whose stacks plimages__scan() may have to name? */
bool plimages__python(const struct plimages *ims);

/* One dump of every running image, reason @reason (usr1, interval, signal). */
void plimages__dump(struct plimages *ims, const char *reason);

/*
 * The run is over: the last image's final dump; what was not recorded
 * said. Returns 0, 1 if the records could not be written, 3 (the tracer's
 * SESSION_EXIT_LOST) if anything was not recorded.
 */
int plimages__finish(struct plimages *ims);

/*
 * -s: each image's live set added to @s (summary.h) as it is last
 * written: its exit section, or the run's final (exit or signal) dump;
 * its interpreter frames' names copied into @names (frametab.h; NULL:
 * not named), which names them when @s is written.
 */
void plimages__summary(struct plimages *ims, struct summary *s, struct frametab *names);

/* Hellos taken so far (0: no process handed its table over). */
uint64_t plimages__hellos(const struct plimages *ims);

#endif /* HEAPSNOOP_PLIMAGE_H */

/* SPDX-License-Identifier: MIT */
/*
 * plread.h - heapsnoop --preload's reader of interpreter frames (the
 * tracer's user/tracer/preload/plimage.c calls it; each runtime's part is
 * its room's, through its row's pl_*: interp/ops.h). Python: the
 * collector writes each stack's CPython frames as the live table's
 * Python words (include/heapsnoop/livetable.h, LT_PY_*: code object,
 * instruction, fingerprint); heapsnoop names them by reading the living
 * process (process_vm_readv: user/interp/python/pycode.c, pylines.c),
 * as soon as a new stack appears in the table and again at each dump,
 * each code object read once, and splices the named frames at the eval
 * loop's native frames (user/interp/splice.c, the eval loop and
 * its .cold part found by pyfind.c in the process's binary). A dump's
 * stacks are then written with synthetic addresses and `frame` records
 * (docs/OUTPUT.md), so a log names them after the process is gone, kill
 * -9 included. What could not be read before the process ended (or a
 * code object freed, and another, or nothing, at its address) is named
 * "<code gone>", counted and said: never a name the frame did not have.
 * docs/COLLECTOR.md, "Python frames".
 *
 * A Lua's image (the header's lua_vm set) is read alike: its frames
 * named by the collector's own name records and spliced by lua/pllua.c.
 */
#ifndef HEAPSNOOP_PLREAD_H
#define HEAPSNOOP_PLREAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livedump.h"

struct plread;
struct plread_image;

/* Every image's interpreter frames; -v's lines if @verbose. NULL: no memory. */
struct plread *plread__new(bool verbose);
void plread__free(struct plread *py);

/*
 * @o's stacks named through @py (its xlate and names hooks): the
 * snapshots' pids are the images' (plread_image__new()).
 */
void plread__hook(struct plread *py, struct lt_out *o);

/*
 * The image @pid (its pidfd @pidfd, its table's @view, which its caller
 * keeps and adds segments to) if its collector reads a CPython's or a
 * Lua's frames (the header's py_version or lua_vm set): its binary read
 * (pyfind). NULL: not (yet) one, or refused (said once).
 */
struct plread_image *plread_image__new(struct plread *py, pid_t pid, int pidfd,
				      const struct lt_view *view);

/* The stacks new in the table since the last scan named, while the process lives. */
void plread_image__scan(struct plread_image *pi);

/* The process ended: nothing more is read of it (its pid may be another's soon). */
void plread_image__ended(struct plread_image *pi);

/* Its counts into the run's, its frames forgotten. NULL: nothing. */
void plread_image__free(struct plread_image *pi);

/*
 * The names of the frames its stacks are written with (frametab.h: the
 * synthetic addresses xlate gives), or NULL for a NULL @py. An image's
 * are forgotten when it is freed: a reader that keeps stacks longer
 * copies their names out first (plsummary.h).
 */
struct frametab *plread__frames(struct plread *py);

/* Said at the run's end: frames named, and those that could not be. */
void plread__finish(struct plread *py);

#endif /* HEAPSNOOP_PLREAD_H */

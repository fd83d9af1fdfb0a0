/* SPDX-License-Identifier: MIT */
/*
 * plpython.h - heapsnoop --preload's side of Python frames: the
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
 * Its images are a Lua's too (the header's lua_vm set): their frames
 * named by the collector's own name records and spliced by pllua.c.
 */
#ifndef HEAPSNOOP_PLPYTHON_H
#define HEAPSNOOP_PLPYTHON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapsnoop/livedump.h"

struct plpy;
struct plpy_image;

/* Every image's Python frames; -v's lines if @verbose. NULL: no memory. */
struct plpy *plpy__new(bool verbose);
void plpy__free(struct plpy *py);

/*
 * @o's stacks named through @py (its xlate and names hooks): the
 * snapshots' pids are the images' (plpy_image__new()).
 */
void plpy__hook(struct plpy *py, struct lt_out *o);

/*
 * The image @pid (its pidfd @pidfd, its table's @view, which its caller
 * keeps and adds segments to) if its collector reads a CPython's or a
 * Lua's frames (the header's py_version or lua_vm set): its binary read
 * (pyfind). NULL: not (yet) one, or refused (said once).
 */
struct plpy_image *plpy_image__new(struct plpy *py, pid_t pid, int pidfd,
				   const struct lt_view *view);

/* The stacks new in the table since the last scan named, while the process lives. */
void plpy_image__scan(struct plpy_image *pi);

/* The process ended: nothing more is read of it (its pid may be another's soon). */
void plpy_image__ended(struct plpy_image *pi);

/* Its counts into the run's, its frames forgotten. NULL: nothing. */
void plpy_image__free(struct plpy_image *pi);

/*
 * The names of the frames its stacks are written with (frametab.h: the
 * synthetic addresses xlate gives), or NULL for a NULL @py. An image's
 * are forgotten when it is freed: a reader that keeps stacks longer
 * copies their names out first (plsummary.h).
 */
struct frametab *plpy__frames(struct plpy *py);

/* Said at the run's end: frames named, and those that could not be. */
void plpy__finish(struct plpy *py);

#endif /* HEAPSNOOP_PLPYTHON_H */

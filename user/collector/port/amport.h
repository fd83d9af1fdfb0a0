/* SPDX-License-Identifier: MIT */
/*
 * amport.h - the platform hooks of the alloc-metadata core
 * (alloc_metadata.c, amlines.c): the list's lock and where the list's own
 * struct comes from. The core needs nothing else of its platform: it
 * writes lines through the caller's hs_am_write_fn (amlines.c), takes its
 * frames from the caller (a Linux program's backtrace(), a firmware's
 * EHABI walk: examples/mcu/backtrace.c), and names no module (a Linux
 * process's `map` records are amdump.c's, a firmware's image is
 * heapdecode's -e). docs/MCU.md says how a port is chosen.
 *
 * The port is one header, chosen at compile time by HS_AM_PORT (a quoted
 * file name; the default the POSIX one: pthread mutexes, calloc). A port
 * header defines:
 *
 *   am_lock_t                   the lock's type
 *   am_lock_init(am_lock_t *)   make it (returns nothing)
 *   am_lock_destroy(am_lock_t *)
 *   am_lock_take(am_lock_t *)   take it: mutual exclusion with every other
 *   am_lock_give(am_lock_t *)   taker (threads, or interrupt handlers that
 *                               allocate); may not allocate
 *   am_port_zalloc(size_t)      @size zeroed bytes for one struct hs_am,
 *                               aligned for it; NULL if none are left
 *   am_port_release(void *)     give them back
 *   AM_PORT_SAMPLING            1 if hs_am__set_sample_bytes() is offered
 *   am_port_estimate(size, mean)  the bytes a sampled block of @size
 *                               stands for (sampling.h's sample_estimate())
 */
#ifndef HEAPSNOOP_AMPORT_H
#define HEAPSNOOP_AMPORT_H

#ifndef HS_AM_PORT
#define HS_AM_PORT "amport_posix.h"
#endif
#include HS_AM_PORT

#endif /* HEAPSNOOP_AMPORT_H */

/* SPDX-License-Identifier: MIT */
/*
 * target.h - what heapsnoop is asked to trace, checked before anything is
 * loaded: the allocator file to probe, and targets it cannot trace
 * correctly (another architecture, 32-bit, a static command with no
 * --allocator) refused with a message that says what to do instead.
 */
#ifndef HEAPSNOOP_TARGET_H
#define HEAPSNOOP_TARGET_H

#include <stddef.h>

#include "options.h"

/*
 * The allocator file to probe into @libpath (@cap bytes), as reachable
 * from here: -a: "" (each C library found later) after checking
 * --allocator is readable; -p: the process's C library from its maps, or
 * --allocator through /proc/PID/root, which it must map; launch mode:
 * --allocator, or heapsnoop's own C library (what a dynamic command will
 * map). Returns 0, or -errno after saying why (no such process, no C
 * library mapped yet, a foreign process: -ENOEXEC).
 */
int target__allocator(const struct options *o, char *libpath, size_t cap);

/*
 * Launch mode: the command at @path (resolved) is refused if it is not a
 * native program (-ENOEXEC) or, without @allocator, statically linked (no
 * C library to probe). Not an ELF file (a script): 0. Says why.
 */
int target__check_command(const char *path, const char *allocator);

#endif /* HEAPSNOOP_TARGET_H */

/* SPDX-License-Identifier: MIT */
/*
 * target.h - what heapsnoop is asked to trace, checked before anything is
 * loaded: the allocator file to probe, and targets it cannot trace
 * correctly (another architecture, 32-bit) refused with a message that
 * says what to do instead.
 */
#ifndef HEAPSNOOP_TARGET_H
#define HEAPSNOOP_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The allocator file to probe into @libpath (@cap bytes), as reachable
 * from here: -a (@all): "" (each C library found later) after checking
 * --allocator (@allocator, NULL if not given) is readable; -p @pid: the
 * process's C library from its maps, or @allocator through
 * /proc/PID/root, which it must map; launch mode (neither): "" (each
 * image's, found at its exec: execprobe.h). Returns 0, or -errno after
 * saying why (no such process, no C library mapped yet, a foreign
 * process: -ENOEXEC).
 */
int target__allocator(bool all, pid_t pid, const char *allocator, char *libpath, size_t cap);

/*
 * Launch mode: the command at @path (resolved) is refused if it is not a
 * native program (-ENOEXEC, said). Not an ELF file (a script): 0; a
 * static one: 0 (its own malloc is probed, execprobe.h).
 */
int target__check_command(const char *path);

#endif /* HEAPSNOOP_TARGET_H */

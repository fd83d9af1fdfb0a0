/* SPDX-License-Identifier: MIT */
/*
 * execprobe.h - launch mode: the allocator of each image the launched
 * command execs (a wrapper such as env, chroot or sh -c 'exec ...', then
 * the program), probed while the command is held (launch.h), before any
 * code of that image runs, wherever the image's files live (another root,
 * another mount namespace): --allocator PATH as found in the process's
 * own root (/proc/PID/root), a statically linked image's own malloc, or
 * the C library its dynamic loader maps, found at the system call that
 * maps it executable, before the loader relocates it. Each exec says
 * which file it probes; an image whose allocator cannot be found is said
 * as it happens and counted: the run is then incomplete.
 */
#ifndef HEAPSNOOP_EXECPROBE_H
#define HEAPSNOOP_EXECPROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "launch.h"

struct libc_watch;
struct exec_probe;

/*
 * Probe each image's allocator into @w (libcwatch.h: a file probed once,
 * by device and inode). @allocator: --allocator, or NULL. @verbose: every
 * exec's allocator said, not only a change of it.
 * Returns NULL on out of memory.
 */
struct exec_probe *exec_probe__new(struct libc_watch *w, const char *allocator, bool verbose);
void exec_probe__free(struct exec_probe *ep);

/*
 * @pid's exec stop (launch_hooks.at_exec): its allocator probed now if it
 * is the image's own or --allocator's; true if its dynamic loader is to be
 * followed (exec_probe__syscall) to the C library it maps.
 */
bool exec_probe__exec(struct exec_probe *ep, pid_t pid);

/*
 * A system call of @pid's dynamic loader (launch_hooks.at_syscall): once
 * one maps an executable C library, it is probed (the process still
 * stopped) and false returned; false too once the loader has handed over
 * to code outside it with no C library mapped, or @sc is NULL (the call
 * cannot be read): said and counted.
 */
bool exec_probe__syscall(struct exec_probe *ep, pid_t pid, const struct launch_syscall *sc);

/* Images whose allocator could not be found or probed: not traced. */
uint64_t exec_probe__untraced(const struct exec_probe *ep);

#endif /* HEAPSNOOP_EXECPROBE_H */

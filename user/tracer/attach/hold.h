/* SPDX-License-Identifier: MIT */
/*
 * hold.h - the traced processes held still while heapsnoop catches up,
 * and let go after: the cgroup v2 freezer (cgroup.freeze, Linux 5.2) on
 * a cgroup of heapsnoop's own, made under the target's and left when
 * tracing ends.
 *
 * Why the freezer (docs/DESIGN.md, "Nothing lost under load"): a frozen
 * task stops on its way back to user space, wherever it is, without a
 * signal its parent or shell sees (SIGSTOP's group stop makes a shell say
 * "Stopped", a parent's waitpid(WUNTRACED) return), without a tracer
 * (ptrace holds no thread a debugger may need), and the kernel holds
 * every thread of every process in the cgroup at once, the children it
 * forks included. The target's /proc/PID/cgroup names heapsnoop's cgroup
 * meanwhile, under the one it was in: its limits and its unit's
 * accounting stay the same.
 *
 * A guard process, started with the cgroup, lets the processes go and
 * puts them back in their cgroup if heapsnoop dies without doing it
 * (kill -9, an OOM kill): nothing stays frozen after heapsnoop.
 */
#ifndef HEAPSNOOP_HOLD_H
#define HEAPSNOOP_HOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct hold;

struct hold_stats {
	uint64_t holds;		/* times the processes were held */
	uint64_t held_ns;	/* for how long in all (CLOCK_MONOTONIC) */
	uint64_t longest_ns;	/* the longest hold */
};

/*
 * A cgroup for process @pid (all its threads), made under the cgroup it
 * is in, @pid moved into it, and its guard started. The processes @pid
 * forks from now on are in it too. Returns 0 and *@out, or -errno with
 * the reason in @why (@cap bytes): no cgroup v2 mounted, not permitted
 * (a container whose cgroups are read-only), the process gone.
 */
int hold__new(pid_t pid, char *why, size_t cap, struct hold **out);

/*
 * Hold the processes (@on) or let them go, counted. Thread-safe: the
 * watch thread (stream/flow.h) holds, the loop lets go. Returns 0 or
 * -errno (writing cgroup.freeze).
 */
int hold__set(struct hold *h, bool on);

/* Whether the processes are held now. */
bool hold__held(const struct hold *h);

void hold__stats(const struct hold *h, struct hold_stats *st);

/*
 * Let the processes go, put those still alive back in the cgroup they
 * came from, remove the cgroup and stop the guard; then free @h. NULL:
 * nothing.
 */
void hold__free(struct hold *h);

#endif /* HEAPSNOOP_HOLD_H */

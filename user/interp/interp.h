/* SPDX-License-Identifier: MIT */
/*
 * interp.h - interpreter frames in the loader: which traced processes run
 * an interpreter (a CPython 3.11 to 3.14: pyfind.h), found when tracing
 * begins (-p), at each exec and once the C library is mapped (launch
 * mode), at an exec seen later (-p), inherited at a fork (-f); each
 * registered for the BPF side's walk (bpf/interp.bpf.h: struct hs_interp_proc
 * in interp_procs) with its code objects' destructor probed; the walk's
 * records named (pycache.h) and spliced among the native frames of the
 * allocation they come with (splice.h). What it found, what it could not
 * and why, and what it means for the records are said as they happen;
 * -v gives the counts. docs/DESIGN.md, "Interpreter frames".
 */
#ifndef HEAPSNOOP_TRACER_INTERP_H
#define HEAPSNOOP_TRACER_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "heapsnoop/event.h"
#include "heapsnoop/interpframe.h"
#include "unwind/unwind.h"

struct heapsnoop_bpf;
struct interp;

/* An interpreter frame named: what a synthetic frame address stands for. */
struct interp_frame {
	enum hs_interp_kind kind;
	const char *function;	/* "<code gone>" when its code object could not be found */
	const char *file;
	uint32_t line;		/* 0: not known */
};

struct interp_opts {
	struct heapsnoop_bpf *skel;	/* its interp_procs map, its interp_code_gone program */
	bool python;			/* --interp: CPython's frames */
	bool lua;			/* ... Lua's */
	bool follow_forks;		/* -f: a destructor's probe for every process */
	bool verbose;
	unsigned int max_frames;	/* <= HS_INTERP_MAX_FRAMES */
	/* The ring's records not handed over yet, from @from (reader__peek). */
	int (*peek)(void *ctx, uint64_t from,
		    void (*fn)(void *fctx, const void *data, size_t len, uint64_t pos), void *fctx,
		    uint64_t *to);
	/* The ring's producer position now. */
	uint64_t (*head)(void *ctx);
	/* The frame address that names @f in process @pid's records. */
	uint64_t (*frame_addr)(void *ctx, pid_t pid, const struct interp_frame *f);
	/*
	 * From now on the frame address @old of process @pid's records is
	 * named as @new is: a better name learned for it (Lua's global names).
	 */
	void (*frame_rename)(void *ctx, pid_t pid, uint64_t old, uint64_t new);
	void *ctx;
};

struct interp *interp__new(const struct interp_opts *o);
void interp__free(struct interp *ip);

/* When interp__look() looks. */
enum interp_when {
	INTERP_RUNNING,		/* -p as tracing begins, or later: the process runs */
	INTERP_AT_EXEC,		/* launch mode's exec stop: its image is mapped, maybe not its C library */
	INTERP_AT_LIBC,		/* launch mode: its loader has just mapped its C library */
};

/*
 * Look for an interpreter in process @pid now and, if it has one, read
 * its frames from now on. Says what it found, and what it means for the
 * records (pymalloc's small objects).
 */
void interp__look(struct interp *ip, pid_t pid, enum interp_when when);

/*
 * A ring buffer record (@len bytes at sequence @seq: its position + 1)
 * before trace.c handles it: HS_EV_INTERP kept for its thread's next
 * allocation; HS_EV_INTERP_CODE (a code object's death, in order);
 * HS_EV_EXEC, HS_EV_EXIT, HS_EV_FORK.
 */
void interp__record(struct interp *ip, const struct hs_event *ev, size_t len, uint64_t seq);

/*
 * Allocation @ev (sequence @seq) of a process: its @n native frames
 * (innermost first; @native_cut: the walk did not reach the stack's end)
 * with its interpreter frames spliced in, into @out (at most @max).
 * Returns how many; *@flags gets the stack's STACK_* bits (stacks.h) the
 * interpreter frames add. A process without an interpreter: the native
 * frames as they are.
 */
uint32_t interp__splice(struct interp *ip, const struct hs_event *ev, uint64_t seq,
			const uint64_t *native, uint32_t n, bool native_cut,
			const struct unwind_grab *grab, uint64_t *out, uint32_t max, uint32_t *flags);

/*
 * The native frame whose registers interp__splice() wants of process
 * @pid's allocations (Lua's interpreter loop: it keeps the running
 * function's exact position in one) as [*@lo, *@hi); false: none.
 */
bool interp__grab(struct interp *ip, pid_t pid, uint64_t *lo, uint64_t *hi);

/*
 * A dump is about to be written (SIGUSR1, -i, the end): every process's
 * frame names brought up to date where a room learned better ones since
 * its records were named (Lua 5.4's global names: a walk of
 * package.loaded now), so the dump names them as the runtime's own
 * traceback would now. Reads the processes' memory; a process that
 * cannot be read keeps its names.
 */
void interp__settle(struct interp *ip);

/* -v: what was read and named, and how. */
void interp__stats(const struct interp *ip, FILE *out);

/*
 * Launch mode and --preload, before command @cmd (as execvp() finds it;
 * NULL: not known) starts: the environment each runtime @o asks for
 * wants it to run in, set (setenv()) and said, every row's command_env
 * in turn (rooms.c; CPython's: PYTHONMALLOC=malloc). Only @o's python,
 * lua and verbose are read: no struct interp is needed. 0 or a negative
 * errno.
 */
int interp__command_env(const struct interp_opts *o, const char *cmd);

#endif /* HEAPSNOOP_TRACER_INTERP_H */

/* SPDX-License-Identifier: MIT */
/*
 * holders.h - who holds the live heap, as both programs' human reports
 * say it first (heapsnoop -s, heapdecode --report and --growth; issue
 * 32). A stack's holder is its innermost frame that is the program's
 * own: in a stack with an interpreter's frames, the innermost of those
 * (the script's function); else, the allocator's entry points (malloc, operator new, ...), the C
 * runtime's modules (libc, the dynamic loader, libstdc++, libgcc_s) and
 * heapsnoop's own skipped, an inlined function counting as a frame of
 * its own. Live bytes are summed by holder function, and beneath each,
 * by the frame that called it: heaptrack_print's "MOST MEMORY LEAKED"
 * with its callers, so that a helper's leak called from two places is
 * one row. The headline is the biggest holder:
 *
 *   biggest holder: 96.0 KiB in 3 blocks, grow_buffer (leaky.c:42) <- main (leaky.c:80)
 *
 * Both programs give the stacks and a way to name a frame (their
 * symbolizer, or the model's); nothing here knows either.
 */
#ifndef HEAPSNOOP_HOLDERS_H
#define HEAPSNOOP_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"

/*
 * Name frame @addr (a return address) of process @pid into @f. Returns
 * false when it cannot be named at all (@f then unused: the address alone).
 */
typedef bool (*holders_lookup_fn)(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f);

/* One caller of a holder and what it holds through it. */
struct holder_caller {
	char *name;		/* "main (leaky.c:80)", or "[no caller]" */
	uint64_t bytes, count;	/* signed with @diff */
};

/* One holding function, its live bytes summed over every stack it holds in. */
struct holder {
	char *func;		/* "grow_buffer"; an interpreter's "f (x.py:3)";
				 * unnamed: "[module+0xELFADDR]" */
	char *where;		/* its biggest stack's "leaky.c:42", or NULL */
	char *caller;		/* its biggest stack's caller, "main (leaky.c:80)", or NULL */
	uint64_t bytes, count;	/* signed with @diff */
	uint64_t cut;		/* allocations whose stack is incomplete */
	struct holder_caller *callers;	/* biggest first */
	size_t ncallers;
};

struct holders;

/*
 * An empty set naming frames through @fn(@ctx, ...); with @diff the
 * values are signed differences (a baseline subtracted, growth) and
 * ranked signed. NULL: no memory.
 */
struct holders *holders__new(holders_lookup_fn fn, void *ctx, bool diff);
void holders__free(struct holders *h);

/*
 * Add a stack of process @pid, @depth return addresses @frames (innermost
 * first, frame 0 the allocator's caller), holding @bytes in @count blocks,
 * @cut of them with an incomplete stack. 0 or -ENOMEM.
 */
int holders__add(struct holders *h, uint32_t pid, const uint64_t *frames, uint32_t depth,
		 uint64_t bytes, uint64_t count, uint64_t cut);

/*
 * The holders, biggest first (bytes, then blocks, then name), each with
 * its callers; *@n of them. Valid until holders__free or the next add;
 * NULL (*@n 0) when no stack was added or no memory.
 */
const struct holder *holders__list(struct holders *h, size_t *n);

/*
 * The headline into @buf (@cap bytes): "@what: 4.0 KiB in 1 block,
 * load_config (leaky.c:58) <- main (leaky.c:67)". Returns false (@buf
 * "") when there is none: nothing live, or with @diff nothing grew.
 */
bool holders__headline(struct holders *h, const char *what, char *buf, size_t cap);

/*
 * The holder's name of one stack, as holders__list names it (heapdecode
 * --by function), into @buf (@cap bytes); "[no stack]" for @depth 0.
 */
void holders__name(holders_lookup_fn fn, void *ctx, uint32_t pid, const uint64_t *frames,
		   uint32_t depth, char *buf, size_t cap);

/*
 * Is @f a frame of the allocator, the C runtime or heapsnoop, never a
 * holder: by its module (libc, the dynamic loader, libstdc++, libc++,
 * libgcc_s, jemalloc, tcmalloc, mimalloc, heapsnoop's collector), else,
 * when named (SYM_OK), by its function (the allocator's entry points, a
 * static program's own: malloc, calloc, ..., operator new/delete)? An
 * interpreter's frame (@f->kind) never is. The headline's rule, and the
 * live view's for the frame it shows first (liveview.c).
 */
bool holders__is_runtime(const struct sym_frame *f);

/*
 * Is @f a frame of the C runtime's start of a process or thread
 * (__libc_start_main, _start, start_thread, clone3, ...): where a report
 * cuts a stack unless asked for all of it (stackview.h)?
 */
bool holders__is_start(const struct sym_frame *f);

/*
 * Is @f the boundary between a thread's frames and its creator's
 * (frametab.h's FRAMETAB_CREATOR_KIND)? Never a holder nor an
 * interpreter's frame; a report's stack goes on past a thread's start to
 * it (stackview.c).
 */
bool holders__is_boundary(const struct sym_frame *f);

#endif /* HEAPSNOOP_HOLDERS_H */

// SPDX-License-Identifier: MIT
/*
 * preload.c - libheapsnoop_preload.so: the in-process collector for any
 * dynamically linked program (LD_PRELOAD; `heapsnoop --preload -- CMD`).
 * Every allocator entry point of the C library is interposed; a tracked
 * block's record (size, stack) is an entry of this image's live table in
 * shared memory (ltwrite.c, include/heapsnoop/livetable.h), which
 * heapsnoop --preload holds and dumps however the process ends (hello.c),
 * or which the process dumps itself (lastdump.c). Behind each tracked
 * block only 16 bytes stay (block.h). The set-up is setup.c's. Variables
 * and behaviour: docs/COLLECTOR.md.
 *
 * A block is ours or not by the magic before it, so blocks the collector
 * did not track pass straight to the C library: those made while the
 * collector itself allocates, the unsampled ones with
 * HEAPSNOOP_SAMPLE_BYTES, and those from before the real functions were
 * found, which come from a static arena (dlsym calls calloc while it
 * resolves them) and are never given back.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block.h"
#include "creator.h"
#include "lastdump.h"
#include "ltwrite.h"
#include "localstack.h"
#include "ltstacks.h"
#include "records.h"
#include "sampler.h"
#include "plstate.h"
#include "luaframes.h"
#include "pywalk.h"
#include "teststop.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __attribute__((tls_model("initial-exec")))
#define MIN_ALIGN 16

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_memalign)(size_t, size_t);
static size_t (*real_usable)(void *);

/* Before the real functions are known: a bump arena, never freed. */
static _Alignas(16) char arena[64 * 1024];
static size_t arena_used;

int pl_ready;
uint64_t pl_sample_mean;
uint64_t pl_seed;
__thread int pl_in_hook TLS;
static __thread struct sampler tl_sampler TLS;
static __thread int tl_sampler_on TLS;
static uint64_t thread_serial;

static void *arena_alloc(size_t n)
{
	size_t at = (arena_used + 15) & ~(size_t)15;

	if (at + n > sizeof(arena))
		return NULL;
	arena_used = at + n;
	return arena + at;	/* static: already zero */
}

static inline bool in_arena(const void *p)
{
	return (uintptr_t)p - (uintptr_t)arena < sizeof(arena);
}

void pl_resolve(void)
{
	/*
	 * volatile: dlsym() reaches calloc_slow() and this test again (glibc
	 * before 2.34 callocs its error buffer), a path the compiler cannot
	 * see; as a plain static, GCC dropped the store of 1 as dead and
	 * resolve() recursed until the stack ran out.
	 */
	static volatile int resolving;

	if (resolving)
		return;
	resolving = 1;
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	resolving = 0;
}

bool pl_resolved(void)
{
	return real_malloc;
}

void *pl_libc_malloc(size_t n)
{
	if (!real_malloc)
		pl_resolve();
	return real_malloc ? real_malloc(n) : NULL;
}

void pl_libc_free(void *p)
{
	real_free(p);
}

/* --- which allocations are tracked -------------------------------------------- */

/*
 * take()'s slow half: the countdown ran out. Not the program's allocation
 * (the collector's own, or before set-up): the bytes are given back. Not
 * sampling: every allocation, the countdown kept at 0. A thread's first
 * allocation starts its sampler. Else a sample point fell in these bytes.
 */
static __attribute__((noinline)) bool take_slow(size_t size)
{
	if (unlikely(pl_in_hook) || unlikely(!__atomic_load_n(&pl_ready, __ATOMIC_RELAXED))) {
		sampler__uncount(&tl_sampler, size);
		return false;
	}
	if (!pl_sample_mean) {
		tl_sampler.until = 0;
		return true;
	}
	if (unlikely(!tl_sampler_on)) {
		sampler__init(&tl_sampler,
			      pl_seed + __atomic_fetch_add(&thread_serial, 1, __ATOMIC_RELAXED) * 0x9e37ull,
			      pl_sample_mean);
		tl_sampler_on = 1;
		if (!sampler__due(&tl_sampler, size))
			return false;
	}
	/* Recorded as it is: the dump says the mean, heapdecode estimates. */
	return sampler__hit_slow(&tl_sampler, pl_sample_mean);
}

/*
 * Is this allocation of @size to be tracked? Unsampled ones cost a
 * thread-local countdown and a branch: no lock, no stack, no header (the
 * block is the C library's own). The countdown starts at 0, so every
 * thread's first allocation, and every one when not sampling, goes to
 * take_slow().
 */
static inline bool take(size_t size)
{
	return unlikely(sampler__due(&tl_sampler, size)) && take_slow(size);
}

/* --- tracked blocks ------------------------------------------------------------ */

_Static_assert(LT_MAX_DEPTH <= REC_MAX_DEPTH && LOCALSTACK_MAX_DEPTH == LT_MAX_DEPTH,
	       "a record holds what the table keeps");

/* The REC_CUT_* bits of localstack's @cut. */
static inline unsigned int rec_cut(unsigned int cut)
{
	return (cut & LOCALSTACK_CUT_DEPTH ? REC_CUT_DEPTH : 0) |
	       (cut & LOCALSTACK_CUT_UNREADABLE ? REC_CUT_UNREADABLE : 0);
}

/*
 * Native frames only (no interpreter's after them): a thread's creator is
 * appended to these alone (an interpreter's words end a stack).
 */
static inline bool plain_stacks(void)
{
	return !pywalk_on && !(luaframes_main && luaframes_on);
}

/* A stack interned, a CPython's or a Lua state's frames after it (interp/). */
static inline uint32_t intern(const uint64_t *frames, uint32_t depth, uint32_t cut)
{
	if (pywalk_on)
		return pywalk__intern(frames, depth, cut);
	if (unlikely(luaframes_main) && luaframes_on)
		return luaframes__intern(frames, depth, cut);
	return ltstacks__intern(frames, depth, cut);
}

/*
 * A stack deeper than one token (31 frames): walked again, whole up to
 * LT_MAX_DEPTH, in a frame of its own so that only such an allocation
 * has its buffer (8 KiB) on the stack (main's deep_tail(), with the
 * table's stacks holding every frame); its id, 0 if it could not be kept.
 */
static __attribute__((noinline)) uint32_t deep_stack(void)
{
	uint64_t buf[LOCALSTACK_BUF_FOR(LT_MAX_DEPTH)];
	const uint64_t *frames;
	unsigned int cut;
	uint32_t depth = (uint32_t)localstack__capture(buf, LT_MAX_DEPTH, &frames, &cut), rc = rec_cut(cut);

	if (unlikely(creator_self || creator_calling))
		depth = creator__append((uint64_t *)frames, depth, LT_MAX_DEPTH, &rc, plain_stacks());
	return intern(frames, depth, rc);
}

/*
 * The stack @frames[@depth] in @buf (LOCALSTACK_BUF) of a thread with a
 * creator (creator.h), its cut bits @cut: the creator's chain appended
 * where it fits one token's frames, else walked again deep.
 */
static __attribute__((noinline)) uint32_t creator_stack(uint64_t *buf, const uint64_t *frames,
							uint32_t depth, uint32_t cut)
{
	uint64_t *f = buf + (frames - buf);

	if (!cut && plain_stacks() && creator_self && depth + 1 + creator_self->n > HS_MAX_DEPTH)
		return deep_stack();
	depth = creator__append(f, depth, HS_MAX_DEPTH, &cut, plain_stacks());
	return intern(f, depth, cut);
}

/*
 * The stack of this call, interned: its id, 0 if it could not be kept.
 * The first walk stops at a token's 31 frames, which most stacks fit;
 * a deeper one is walked again whole. A section: a fork waits while a
 * thread may hold the loader's lock (livetable.h).
 */
static inline __attribute__((always_inline)) uint32_t this_stack(void)
{
	uint64_t buf[LOCALSTACK_BUF];
	const uint64_t *frames;
	unsigned int cut;
	uint32_t id;
	int depth;

	lt_section_enter();
	depth = localstack__capture(buf, HS_MAX_DEPTH, &frames, &cut);
	if (unlikely(cut & LOCALSTACK_CUT_DEPTH))
		id = deep_stack();
	else if (unlikely(creator_self || creator_calling))
		id = creator_stack(buf, frames, (uint32_t)depth, rec_cut(cut));
	else
		id = intern(frames, (uint32_t)depth, rec_cut(cut));
	lt_section_exit();
	return id;
}

/* @user's block, its entry published for @asked bytes from stack @stack. */
static void *publish(char *block, size_t head, size_t asked, uint32_t stack)
{
	struct pl_block *b = pl_block_of(block + head);
	uint32_t slot;

	b->head = (uint32_t)head;
	b->reserved = 0;
	lt_section_enter();
	slot = lt_slot_get();
	b->slot = slot;
	if (likely(slot != LT_NO_SLOT)) {
		lt_will_change(slot);
		lt_entry_publish(lt_entry_at(slot), (uintptr_t)(block + head), asked, stack, lt_tls.tid, 0);
	}
	lt_section_exit();
	if (unlikely(slot == LT_NO_SLOT))
		__atomic_fetch_add(&lt.h->lost_entries, 1, __ATOMIC_RELAXED);	/* ours, unrecorded */
	b->magic = pl_block_magic(b);
	return block + head;
}

/*
 * A tracked block of @size bytes aligned to @align, recorded as @asked
 * bytes (pvalloc's argument; else @size); NULL and errno.
 */
static inline __attribute__((always_inline)) void *
tracked_alloc_as(size_t size, size_t asked, size_t align)
{
	size_t head = align > MIN_ALIGN ? align : MIN_ALIGN;
	uint32_t stack;
	char *block;

	if (unlikely(!lt_tls.tid))
		pl_thread_start();
	pl_in_hook++;
	lastdump__tick();
	stack = this_stack();
	block = size > SIZE_MAX - head ? NULL :
		align > MIN_ALIGN ? real_memalign(align, head + size) : real_malloc(head + size);
	pl_in_hook--;
	if (!block) {
		errno = ENOMEM;
		return NULL;
	}
	return publish(block, head, asked, stack);
}

static __attribute__((noinline)) void free_ours(void *p)
{
	struct pl_block *b = pl_block_of(p);
	uint32_t s = b->slot, head = b->head;

	if (unlikely(!lt_tls.tid))
		pl_thread_start();
	b->magic = 0;	/* a second free of the same pointer is not taken for ours */
	if (likely(s != LT_NO_SLOT) && lt.base) {
		lt_section_enter();
		lt_will_change(s);
		lt_entry_free(lt_entry_at(s));
		TEST_STOP(4);
		lt_slot_put(s);
		lt_section_exit();
	}
	real_free((char *)p - head);
}

static size_t usable(void *p)
{
	if (!p || in_arena(p))
		return 0;
	if (pl_block_ours(p))
		return real_usable((char *)p - pl_block_of(p)->head) - pl_block_of(p)->head;
	return real_usable(p);
}

/*
 * A tracked block resized and kept tracked: the C library's realloc moves
 * it with its header; its new entry names the old slot until that is
 * freed (livetable.h: seen before or after, never both, never neither).
 * NULL with *@copy set: the caller makes a new block instead.
 */
static void *realloc_tracked(void *old, size_t size, bool *copy)
{
	struct pl_block *b = pl_block_of(old);
	uint32_t x = b->slot, head = b->head, stack, n;
	char *nb;

	if (size > SIZE_MAX - head || x == LT_NO_SLOT || !lt.base) {
		*copy = true;
		return NULL;
	}
	if (unlikely(!lt_tls.tid))
		pl_thread_start();
	pl_in_hook++;
	lastdump__tick();
	stack = this_stack();
	nb = real_realloc((char *)old - head, head + size);
	pl_in_hook--;
	if (!nb) {
		errno = ENOMEM;
		return NULL;
	}
	b = pl_block_of(nb + head);
	lt_section_enter();
	n = lt_slot_get();
	b->slot = n;
	if (likely(n != LT_NO_SLOT)) {
		lt_will_change(n);
		lt_entry_publish(lt_entry_at(n), (uintptr_t)(nb + head), size, stack, lt_tls.tid, x + 1);
	}
	TEST_STOP(2);
	lt_will_change(x);
	lt_entry_free(lt_entry_at(x));
	TEST_STOP(3);
	lt_slot_put(x);
	if (likely(n != LT_NO_SLOT))
		lt_entry_unlink(lt_entry_at(n));
	lt_section_exit();
	if (unlikely(n == LT_NO_SLOT))
		__atomic_fetch_add(&lt.h->lost_entries, 1, __ATOMIC_RELAXED);
	b->magic = pl_block_magic(b);
	return nb + head;
}

/* --- the interposed functions -------------------------------------------------- */

/*
 * Each entry point is a fast path, inline, for an allocation the sampler
 * passes over (a countdown and a branch, then a tail call to the C
 * library), and a slow path out of line, reached by a tail call, so that
 * a tracked allocation is unwound through one frame of ours.
 */

static __attribute__((noinline)) void *malloc_slow(size_t size)
{
	if (unlikely(!real_malloc)) {
		pl_resolve();
		if (!real_malloc)
			return arena_alloc(size);
	}
	if (!take_slow(size))
		return real_malloc(size);
	return tracked_alloc_as(size, size, MIN_ALIGN);
}

EXPORT void *malloc(size_t size)
{
	if (likely(!sampler__due(&tl_sampler, size)))
		return real_malloc(size);	/* above 0 only once set up */
	return malloc_slow(size);
}

EXPORT void free(void *p)
{
	if (!p || in_arena(p))
		return;
	/* lua_close's last free: this thread's Lua state is gone (interp/lua/luaframes.c). */
	if (unlikely((uintptr_t)p == luaframes_block))
		luaframes_main = luaframes_block = 0;
	if (pl_block_ours(p)) {
		free_ours(p);
		return;
	}
	real_free(p);
}

static __attribute__((noinline)) void *calloc_slow(size_t n, size_t size, size_t total)
{
	void *p;

	if (unlikely(!real_calloc)) {
		pl_resolve();
		if (!real_calloc)
			return arena_alloc(total);	/* dlsym's own calloc */
	}
	if (!take_slow(total))
		return real_calloc(n, size);
	p = tracked_alloc_as(total, total, MIN_ALIGN);
	if (p)
		memset(p, 0, total);
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (likely(!sampler__due(&tl_sampler, total)))
		return real_calloc(n, size);
	return calloc_slow(n, size, total);
}

/*
 * realloc() of a block of ours or the arena's, or of a size the countdown
 * ran out on (@counted: already counted down).
 */
static __attribute__((noinline)) void *realloc_slow(void *old, size_t size, bool counted)
{
	bool track = counted ? take_slow(size) : take(size), ours = !in_arena(old) && pl_block_ours(old);
	size_t keep;
	void *p;

	if (unlikely(!real_realloc))
		pl_resolve();
	if (track && ours) {
		bool copy = false;

		p = realloc_tracked(old, size, &copy);
		if (!copy)
			return p;
	}
	if (!track) {
		if (!ours && !in_arena(old))
			return real_realloc(old, size);
		p = real_malloc(size);
	} else {
		p = tracked_alloc_as(size, size, MIN_ALIGN);
	}
	if (!p)
		return NULL;
	keep = in_arena(old) ? size : usable(old);
	if (in_arena(old) && keep > (size_t)(arena + sizeof(arena) - (char *)old))
		keep = (size_t)(arena + sizeof(arena) - (char *)old);
	memcpy(p, old, keep < size ? keep : size);
	free(old);
	return p;
}

/* A Lua state's first block (interp/lua/luaframes.c): lua_newstate's LG. */
static __attribute__((noinline)) void *lua_state_block(size_t size)
{
	void *p = malloc(size);

	if (p)
		luaframes__newstate(p, size);
	return p;
}

EXPORT void *realloc(void *old, size_t size)
{
	if (!old) {
		/* lauxlib's l_alloc tail-calls realloc: its return is lua_newstate's. */
		uintptr_t ra = (uintptr_t)__builtin_return_address(0);

		if (unlikely(ra - luaframes_ns_lo < luaframes_ns_hi - luaframes_ns_lo))
			return lua_state_block(size);
		return malloc(size);
	}
	if (!size) {
		free(old);
		return NULL;
	}
	if (in_arena(old) || pl_block_ours(old))
		return realloc_slow(old, size, false);
	if (likely(!sampler__due(&tl_sampler, size)))
		return real_realloc(old, size);
	return realloc_slow(old, size, true);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(old, total);
}

/*
 * Every aligned entry point: @align a power of two, @size bytes given,
 * @asked recorded (pvalloc rounds up; heapsnoop records the argument).
 */
static void *aligned(size_t align, size_t size, size_t asked)
{
	if (unlikely(!real_memalign))
		pl_resolve();
	if (!take(asked))
		return real_memalign(align, size);
	return tracked_alloc_as(size, asked, align);
}

static bool power_of_two(size_t a)
{
	return a && !(a & (a - 1));
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	p = aligned(align, size, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	if (!power_of_two(align)) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(align, size, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
	/* glibc: a non-power of two is raised to the next one, 0 taken as 1. */
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	while (!power_of_two(align))
		align = align ? (align | (align - 1)) + 1 : 1;
	return aligned(align, size, size);
}

EXPORT void *valloc(size_t size)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), size, size);
}

EXPORT void *pvalloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (size > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(page, size ? (size + page - 1) & ~(page - 1) : page, size);
}

EXPORT size_t malloc_usable_size(void *p)
{
	return usable(p);
}

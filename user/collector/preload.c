// SPDX-License-Identifier: MIT
/*
 * preload.c - libheapsnoop_preload.so: the in-process collector for any
 * dynamically linked program (LD_PRELOAD; `heapsnoop --preload -- CMD`).
 * Every allocator entry point of the C library is interposed; a tracked
 * block keeps its record behind it (alloc_metadata.c, the lws layout) and
 * sits on the live list, which is dumped as heapsnoop's records
 * (docs/OUTPUT.md) at exit, on a signal and every N seconds. Variables and
 * behaviour: docs/COLLECTOR.md.
 *
 * A block is ours or not by the magic before it (hs_am_owns()), so blocks
 * the collector did not track pass straight to the C library: those made
 * while the collector itself allocates (a dump's buffers), the
 * unsampled ones with HEAPSNOOP_SAMPLE_BYTES, and those from before the
 * real functions were found, which come from a static arena (dlsym calls
 * calloc while it resolves them) and are never given back.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "carrier.h"
#include "heapsnoop/alloc_metadata.h"
#include "heapsnoop/env.h"
#include "localstack.h"
#include "records.h"
#include "sampler.h"
#include "stackcache.h"
#include "stacktail.h"

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_memalign)(size_t, size_t);
static size_t (*real_usable)(void *);

/* Before the real functions are known: a bump arena, never freed. */
static _Alignas(16) char arena[64 * 1024];
static size_t arena_used;

static struct hs_am *live;
static int out_fd = 2;
static uint64_t sample_mean;	/* 0: every allocation */
static uint64_t seed;
static unsigned int interval_s;
static atomic_int dump_pending;	/* a signal asked for a dump */
static atomic_llong next_interval_ns;
static atomic_int ready;

static __thread int in_hook __attribute__((tls_model("initial-exec")));
static __thread struct sampler tl_sampler __attribute__((tls_model("initial-exec")));
static __thread int tl_sampler_on __attribute__((tls_model("initial-exec")));
static atomic_ullong thread_serial;

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

static void resolve(void)
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

/* --- the dump ------------------------------------------------------------- */

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* The whole dump built in memory, then written at once: O_APPEND keeps
 * dumps of processes sharing one file whole. */
static void dump(const char *reason)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!live)
		return;
	in_hook++;
	f = open_memstream(&buf, &len);
	if (f) {
		hs_am__dump(live, f, (int)getpid(), reason, hs_am_maps_self, NULL);
		fclose(f);
		for (size_t off = 0; off < len;) {
			ssize_t n = write(out_fd, buf + off, len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		free(buf);
	}
	in_hook--;
}

/* On the allocation path: a dump a signal or the interval asked for. */
static void maybe_dump(void)
{
	long long now, due;

	if (unlikely(atomic_load_explicit(&dump_pending, memory_order_relaxed)) &&
	    atomic_exchange(&dump_pending, 0))
		dump("usr1");
	if (!interval_s)
		return;
	now = mono_ns();
	due = atomic_load_explicit(&next_interval_ns, memory_order_relaxed);
	if (now >= due &&
	    atomic_compare_exchange_strong(&next_interval_ns, &due,
					   now + interval_s * 1000000000ll))
		dump("interval");
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&dump_pending, 1);
}

/* --- tracked blocks ---------------------------------------------------------- */

/*
 * take()'s slow half: the countdown ran out. Not the program's allocation
 * (the collector's own, or before set-up): the bytes are given back. Not
 * sampling: every allocation, the countdown kept at 0. A thread's first
 * allocation starts its sampler. Else a sample point fell in these bytes.
 */
static __attribute__((noinline)) bool take_slow(size_t size)
{
	if (unlikely(in_hook) || unlikely(!atomic_load_explicit(&ready, memory_order_relaxed))) {
		sampler__uncount(&tl_sampler, size);
		return false;
	}
	if (!sample_mean) {
		tl_sampler.until = 0;
		return true;
	}
	if (unlikely(!tl_sampler_on)) {
		sampler__init(&tl_sampler, seed + atomic_fetch_add(&thread_serial, 1) * 0x9e37ull,
			      sample_mean);
		tl_sampler_on = 1;
		if (!sampler__due(&tl_sampler, size))
			return false;
	}
	/* Recorded as it is: the dump says the mean, heapdecode estimates. */
	return sampler__hit_slow(&tl_sampler, sample_mean);
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

_Static_assert(LOCALSTACK_MAX_DEPTH == REC_MAX_DEPTH, "the collector keeps what a record holds");

/*
 * A stack deeper than one token (31 frames): walked again, whole up to
 * REC_MAX_DEPTH, in a frame of its own so that only such an allocation
 * has its buffer (8 KiB) on the stack; its frames past the first 31
 * interned (stacktail.h). Returns their id, *@cut what the deep walk
 * found (cut=depth past REC_MAX_DEPTH, or unreadable); 0 if they could
 * not be kept (*@cut left: the first 31 frames, cut=depth).
 */
static __attribute__((noinline)) uint32_t deep_tail(unsigned int *cut)
{
	uint64_t buf[LOCALSTACK_BUF_FOR(LOCALSTACK_MAX_DEPTH)];
	const uint64_t *frames;
	unsigned int c;
	int depth = localstack__capture(buf, LOCALSTACK_MAX_DEPTH, &frames, &c);
	uint32_t id = depth > HS_MAX_DEPTH ? stacktail__intern(frames, (uint32_t)depth) : 0;

	if (id)
		*cut = c;
	return id;
}

/*
 * A tracked block of @size bytes aligned to @align, recorded as @asked
 * bytes (pvalloc's argument; else @size); NULL and errno.
 */
static inline __attribute__((always_inline)) void *
tracked_alloc_as(size_t size, size_t asked, size_t align)
{
	struct hs_am_site site;
	struct hs_stack_bits sb;
	uint64_t buf[LOCALSTACK_BUF];
	const uint64_t *frames;
	unsigned int cut;
	uint32_t tail = 0;
	int depth, err;
	size_t total = 0;
	void *block;

	in_hook++;
	maybe_dump();
	depth = localstack__capture(buf, HS_MAX_DEPTH, &frames, &cut);
	if (unlikely(cut & LOCALSTACK_CUT_DEPTH))
		tail = deep_tail(&cut);
	if (!stackcache__bits(frames, (uint32_t)depth, &sb))
		total = hs_am_site__prepare_bits(&site, asked, align, &sb, &err);
	if (total && size - asked > SIZE_MAX - total)
		total = 0;
	else if (total)
		total += size - asked;
	site.cut = (cut & LOCALSTACK_CUT_DEPTH ? HS_AM_CUT_DEPTH : 0) |
		   (cut & LOCALSTACK_CUT_UNREADABLE ? HS_AM_CUT_UNREADABLE : 0);
	site.tail = tail;
	block = !total ? NULL : align > HS_AM_MIN_ALIGN ? real_memalign(align, total) :
		real_malloc(total);
	in_hook--;
	if (!block) {
		errno = ENOMEM;
		return NULL;
	}
	return hs_am__place(live, &site, block);
}

static inline __attribute__((always_inline)) void *tracked_alloc(size_t size, size_t align)
{
	return tracked_alloc_as(size, size, align);
}

static bool ours(const void *p)
{
	return p && !in_arena(p) && hs_am_owns_inline(p);
}

static size_t usable(void *p)
{
	if (!p || in_arena(p))
		return 0;
	if (hs_am_owns_inline(p))
		return real_usable((char *)p - hs_am_node(p)->head) - hs_am_node(p)->head;
	return real_usable(p);
}

/* --- the interposed functions ------------------------------------------------ */

/*
 * Each entry point is a fast path, inline, for an allocation the sampler
 * passes over (a countdown and a branch, then a tail call to the C
 * library), and a slow path out of line, reached by a tail call, so that
 * a tracked allocation is unwound through one frame of ours.
 */

/* malloc() once the countdown ran out, or before set-up. */
static __attribute__((noinline)) void *malloc_slow(size_t size)
{
	if (unlikely(!real_malloc)) {
		resolve();
		if (!real_malloc)
			return arena_alloc(size);
	}
	if (!take_slow(size))
		return real_malloc(size);
	return tracked_alloc(size, HS_AM_MIN_ALIGN);
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
	if (hs_am_owns_inline(p)) {
		real_free(hs_am__remove(live, p));
		return;
	}
	real_free(p);
}

static __attribute__((noinline)) void *calloc_slow(size_t n, size_t size, size_t total)
{
	void *p;

	if (unlikely(!real_calloc)) {
		resolve();
		if (!real_calloc)
			return arena_alloc(total);	/* dlsym's own calloc */
	}
	if (!take_slow(total))
		return real_calloc(n, size);
	p = tracked_alloc(total, HS_AM_MIN_ALIGN);
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
	bool track = counted ? take_slow(size) : take(size);
	size_t keep;
	void *p;

	if (unlikely(!real_realloc))
		resolve();
	if (!track) {
		if (!ours(old) && !in_arena(old))
			return real_realloc(old, size);
		p = real_malloc(size);
	} else {
		p = tracked_alloc(size, HS_AM_MIN_ALIGN);
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

EXPORT void *realloc(void *old, size_t size)
{
	if (!old)
		return malloc(size);
	if (!size) {
		free(old);
		return NULL;
	}
	if (in_arena(old) || hs_am_owns_inline(old))
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
		resolve();
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

/* --- set-up ------------------------------------------------------------------ */

static void fork_prepare(void)
{
	hs_am__lock(live);
}

static void fork_parent(void)
{
	hs_am__unlock(live);
}

static void open_output(void);

static void fork_child(void)
{
	const char *v = getenv(HS_ENV_OUTPUT);

	hs_am__unlock(live);
	/* A name with the pid in it: the child's records go to its own file. */
	if (v && strstr(v, "%p")) {
		if (out_fd != 2)
			close(out_fd);
		out_fd = 2;
		open_output();
	}
	/* The child's samplers start afresh; its interval from now. */
	if (interval_s)
		atomic_store(&next_interval_ns, mono_ns() + interval_s * 1000000000ll);
}

/* HEAPSNOOP_OUTPUT, "%p" replaced by the pid; standard error if unset. */
static void open_output(void)
{
	const char *v = getenv(HS_ENV_OUTPUT);
	char path[4096];
	size_t n = 0;

	if (!v || !*v)
		return;
	for (; *v && n + 24 < sizeof(path); v++) {
		if (v[0] == '%' && v[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
			v++;
		} else {
			path[n++] = *v;
		}
	}
	path[n] = '\0';
	out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		dprintf(2, "heapsnoop-preload: cannot open %s: %s; writing to standard error\n",
			path, strerror(errno));
		out_fd = 2;
	}
}

static unsigned long long env_num(const char *name, unsigned long long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

__attribute__((constructor)) static void collector_init(void)
{
	const char *unwind = getenv(HS_ENV_UNWIND);
	int sig = (int)env_num(HS_ENV_SIGNAL, 0);

	resolve();
	in_hook++;
	carrier__forget();
	live = hs_am__new(NULL);
	open_output();
	in_hook--;
	if (!live || !real_malloc)
		return;
	sample_mean = env_num(HS_ENV_SAMPLE_BYTES, 0);
	hs_am__set_sample_bytes(live, sample_mean);
	seed = env_num(HS_ENV_SEED, 0);
	if (!seed)
		seed = (uint64_t)mono_ns() ^ ((uint64_t)getpid() << 32);
	interval_s = (unsigned int)env_num(HS_ENV_INTERVAL, 0);
	if (interval_s)
		atomic_store(&next_interval_ns, mono_ns() + interval_s * 1000000000ll);
	if (sig > 0 && sig < NSIG) {
		struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

		sigaction(sig, &sa, NULL);
	}
	localstack__init(unwind && !strcmp(unwind, "fp"));
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atomic_store(&ready, 1);
}

__attribute__((destructor)) static void collector_fini(void)
{
	dump("exit");
}

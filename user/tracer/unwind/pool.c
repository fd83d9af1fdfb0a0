// SPDX-License-Identifier: MIT
/*
 * pool.c - stacks unwound on a pool of threads (see pool.h). Jobs live in
 * a ring of slots: the loop's thread fills and submits them at the head
 * and takes them back at the tail, in order; any thread takes the next
 * job to run by a compare-and-exchange of one cursor, so jobs start in
 * the order given and the oldest is done first. Threads with nothing to
 * run sleep on a futex; the loop's thread, waiting for its oldest job,
 * runs the next ones meanwhile, then sleeps on that job's state.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool.h"
#include "unwind/procsrc.h"

enum { JOB_IDLE, JOB_READY, JOB_DONE };

/* Spins of the loop's thread on a job another thread runs, before it sleeps. */
#define POOL_SPINS 4096

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

struct worker {
	pthread_t th;
	struct unwinder *u;
	struct unwind_pool *p;
	bool started;
};

struct unwind_pool {
	struct unwind_job *jobs;
	uint64_t *frames;
	unsigned int mask, max_frames;
	struct unwinder *own;
	/* The loop's thread's alone. */
	uint64_t tail;
	/* Shared, each on its own cache line. */
	_Alignas(64) uint64_t head;	/* jobs submitted */
	_Alignas(64) uint64_t take;	/* the next job a thread may run */
	_Alignas(64) uint32_t wake;	/* the futex idle threads sleep on */
	uint32_t idle;			/* ... how many */
	uint32_t stop;
	unsigned int nthreads;
	struct worker *w;
};

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* The job's mappings; newer ones needed: the loop unwinds it again. */
static const struct mapset *job_maps(void *ctx, bool stale)
{
	struct unwind_job *j = ctx;

	if (!stale)
		return j->maps;
	j->stale = true;
	return NULL;
}

static void run(struct unwind_pool *p, struct unwind_job *j, struct unwinder *u)
{
	struct unwind_req rq = { .pid = j->pid, .maps = job_maps, .ctx = j, .us = j->us,
				 .len = j->len, .frames = j->frames, .max = p->max_frames,
				 .grab = j->want_grab ? &j->grab : NULL, .tail = j->tail,
				 .build = j->build, .hint = j->hint };

	struct unwind_stats before;

	unwinder__stats_save(u, &before);
	unwind__run(u, &rq, &j->res);
	/* Unwound again in turn, with newer mappings: counted there, not here. */
	if (j->stale)
		unwinder__stats_restore(u, &before);
	__atomic_store_n(&j->state, JOB_DONE, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&j->waiter, __ATOMIC_SEQ_CST))
		futex(&j->state, FUTEX_WAKE_PRIVATE, 1);
}

/* Run the next job not taken yet, if any: true if one ran. */
static bool run_next(struct unwind_pool *p, struct unwinder *u)
{
	uint64_t t = __atomic_load_n(&p->take, __ATOMIC_RELAXED);

	if (t >= __atomic_load_n(&p->head, __ATOMIC_ACQUIRE))
		return false;
	if (__atomic_compare_exchange_n(&p->take, &t, t + 1, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		run(p, &p->jobs[t & p->mask], u);
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct unwind_pool *p = w->p;

	for (;;) {
		uint32_t seen;

		if (run_next(p, w->u))
			continue;
		if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
			return NULL;
		/*
		 * Asleep only if no job came after it said so: the submitter
		 * stores the head, then reads @idle; this thread the reverse.
		 */
		seen = __atomic_load_n(&p->wake, __ATOMIC_ACQUIRE);
		__atomic_fetch_add(&p->idle, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&p->take, __ATOMIC_SEQ_CST) >=
		    __atomic_load_n(&p->head, __ATOMIC_SEQ_CST) &&
		    !__atomic_load_n(&p->stop, __ATOMIC_SEQ_CST))
			futex(&p->wake, FUTEX_WAIT_PRIVATE, seen);
		__atomic_fetch_sub(&p->idle, 1, __ATOMIC_SEQ_CST);
	}
}

int unwind_pool__new(unsigned int threads, unsigned int depth, unsigned int max_frames,
		     struct unwind_pool **out)
{
	struct unwind_pool *p = calloc(1, sizeof(*p));
	unsigned int n = 1;
	int err = -ENOMEM;

	if (!p)
		return -ENOMEM;
	while (n < depth)
		n <<= 1;
	p->mask = n - 1;
	p->max_frames = max_frames;
	p->jobs = calloc(n, sizeof(*p->jobs));
	p->frames = calloc((size_t)n * max_frames, sizeof(*p->frames));
	p->own = unwinder__new(&proc_cfi_src);
	p->w = calloc(threads ? threads : 1, sizeof(*p->w));
	if (!p->jobs || !p->frames || !p->own || !p->w)
		goto fail;
	for (unsigned int i = 0; i < n; i++)
		p->jobs[i].frames = p->frames + (size_t)i * max_frames;
	for (unsigned int i = 0; i < threads; i++) {
		struct worker *w = &p->w[i];

		w->p = p;
		w->u = unwinder__new(&proc_cfi_src);
		if (!w->u)
			goto fail;
		p->nthreads++;
		err = -pthread_create(&w->th, NULL, worker_main, w);
		if (err)
			goto fail;
		w->started = true;
	}
	*out = p;
	return 0;
fail:
	unwind_pool__free(p);
	return err;
}

struct unwind_job *unwind_pool__next(struct unwind_pool *p)
{
	uint64_t head = __atomic_load_n(&p->head, __ATOMIC_RELAXED);
	struct unwind_job *j;

	if (head - p->tail > p->mask)
		return NULL;
	j = &p->jobs[head & p->mask];
	memset(&j->res, 0, sizeof(j->res));
	j->stale = false;
	j->want_grab = false;
	j->tail = NULL;
	j->build = false;
	j->hint = 0;
	memset(&j->grab, 0, sizeof(j->grab));
	return j;
}

void unwind_pool__submit(struct unwind_pool *p, struct unwind_job *j)
{
	__atomic_store_n(&j->state, JOB_READY, __ATOMIC_RELAXED);
	__atomic_store_n(&j->waiter, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->head, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->idle, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
		futex(&p->wake, FUTEX_WAKE_PRIVATE, 1);
	}
}

struct unwind_job *unwind_pool__oldest(struct unwind_pool *p)
{
	struct unwind_job *j;

	if (p->tail == __atomic_load_n(&p->head, __ATOMIC_RELAXED))
		return NULL;
	j = &p->jobs[p->tail & p->mask];
	for (int spins = 0; __atomic_load_n(&j->state, __ATOMIC_ACQUIRE) != JOB_DONE;) {
		/* The oldest first: it is the next not taken, if any is not. */
		if (run_next(p, p->own))
			continue;
		if (++spins < POOL_SPINS) {
			cpu_relax();
			continue;
		}
		__atomic_store_n(&j->waiter, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&j->state, __ATOMIC_SEQ_CST) != JOB_DONE)
			futex(&j->state, FUTEX_WAIT_PRIVATE, JOB_READY);
	}
	return j;
}

bool unwind_pool__oldest_seq(const struct unwind_pool *p, uint64_t *seq)
{
	if (p->tail == __atomic_load_n(&p->head, __ATOMIC_RELAXED))
		return false;
	*seq = p->jobs[p->tail & p->mask].seq;
	return true;
}

void unwind_pool__done(struct unwind_pool *p)
{
	p->jobs[p->tail & p->mask].state = JOB_IDLE;
	p->tail++;
}

unsigned int unwind_pool__in_flight(const struct unwind_pool *p)
{
	return (unsigned int)(__atomic_load_n(&p->head, __ATOMIC_RELAXED) - p->tail);
}

struct unwinder *unwind_pool__own(struct unwind_pool *p)
{
	return p->own;
}

static void add_stats(struct unwind_stats *st, struct cfi_stats *cst, const struct unwinder *u)
{
	struct unwind_stats s;
	struct cfi_stats c;

	unwinder__stats(u, &s, &c);
	st->stacks += s.stacks;
	st->complete += s.complete;
	st->cut += s.cut;
	st->depth += s.depth;
	st->fault += s.fault;
	st->frames += s.frames;
	st->fp_frames += s.fp_frames;
	st->jit_frames += s.jit_frames;
	st->slow_frames += s.slow_frames;
	st->paged += s.paged;
	st->holes += s.holes;
	st->spliced += s.spliced;
	st->tail_frames += s.tail_frames;
	st->tail_missed += s.tail_missed;
	st->tail_unknown += s.tail_unknown;
	st->tails_built += s.tails_built;
	/* Each thread's tables are its own: their largest, their caches' sum. */
	cst->modules = c.modules > cst->modules ? c.modules : cst->modules;
	cst->no_cfi = c.no_cfi > cst->no_cfi ? c.no_cfi : cst->no_cfi;
	cst->cfi_bytes = c.cfi_bytes > cst->cfi_bytes ? c.cfi_bytes : cst->cfi_bytes;
	cst->cache_bytes += c.cache_bytes;
	cst->lookups += c.lookups;
	cst->misses += c.misses;
	cst->exprs += c.exprs;
	cst->trims += c.trims;
	cst->closed += c.closed;
}

void unwind_pool__stats(const struct unwind_pool *p, struct unwind_stats *st,
			struct cfi_stats *cst)
{
	memset(st, 0, sizeof(*st));
	memset(cst, 0, sizeof(*cst));
	add_stats(st, cst, p->own);
	for (unsigned int i = 0; i < p->nthreads; i++)
		add_stats(st, cst, p->w[i].u);
}

void unwind_pool__share(const struct unwind_pool *p, unsigned int *threads, uint64_t *stacks)
{
	struct unwind_stats s;
	struct cfi_stats c;

	*threads = p->nthreads;
	*stacks = 0;
	for (unsigned int i = 0; i < p->nthreads; i++) {
		unwinder__stats(p->w[i].u, &s, &c);
		*stacks += s.stacks;
	}
}

void unwind_pool__free(struct unwind_pool *p)
{
	if (!p)
		return;
	__atomic_store_n(&p->stop, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
	futex(&p->wake, FUTEX_WAKE_PRIVATE, INT_MAX);
	for (unsigned int i = 0; i < p->nthreads; i++) {
		if (p->w[i].started)
			pthread_join(p->w[i].th, NULL);
		unwinder__free(p->w[i].u);
	}
	unwinder__free(p->own);
	free(p->w);
	free(p->frames);
	free(p->jobs);
	free(p);
}

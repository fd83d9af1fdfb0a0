// SPDX-License-Identifier: MIT
/*
 * freelog.c - the per-CPU logs of plain frees, taken back into the ring
 * buffer's order. See freelog.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "freelog.h"

/*
 * The reads of one log kept to bound an entry claimed and not yet
 * stamped: at most this many (the oldest are kept when it is full, whose
 * bounds are lower: safe, only later).
 */
#define FREELOG_READS 64

/* One read of a log: its head then, and the producer's position before. */
struct log_read {
	uint64_t head;
	uint64_t ring_head;
};

struct cpu_log {
	struct hs_free_log *log;
	uint64_t tail;				/* entries taken (log->tail) */
	struct log_read reads[FREELOG_READS];	/* heads ascending */
	unsigned int nreads;
};

struct freelog {
	void *map;
	size_t map_size;
	unsigned int ncpus;
	struct cpu_log *cpus;
	struct hs_free_entry *pending;	/* [first, n): ordered by stamp */
	size_t first, n, cap;
	uint64_t taken;
};

int freelog__open(int map_fd, unsigned int ncpus, struct freelog **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct freelog *fl = calloc(1, sizeof(*fl));
	int err;

	if (!fl)
		return -ENOMEM;
	fl->ncpus = ncpus;
	fl->cpus = calloc(ncpus, sizeof(*fl->cpus));
	if (!fl->cpus) {
		free(fl);
		return -ENOMEM;
	}
	/* An mmapable array's values lie one after another from offset 0. */
	fl->map_size = (ncpus * sizeof(struct hs_free_log) + page - 1) & ~(page - 1);
	fl->map = mmap(NULL, fl->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (fl->map == MAP_FAILED) {
		err = -errno;
		free(fl->cpus);
		free(fl);
		return err;
	}
	for (unsigned int c = 0; c < ncpus; c++) {
		struct cpu_log *cl = &fl->cpus[c];

		cl->log = (struct hs_free_log *)fl->map + c;
		/* Before any program ran: every entry comes after position 0. */
		cl->reads[0] = (struct log_read){ 0, 0 };
		cl->nreads = 1;
	}
	*out = fl;
	return 0;
}

/*
 * Where the ring may be read to while entry @idx of @cl is claimed and
 * not stamped: the producer's position at the last read of the log that
 * found its head at or below @idx (the entry was claimed after it, so its
 * stamp will be above that position).
 */
static uint64_t unstamped_bound(const struct cpu_log *cl, uint64_t idx)
{
	uint64_t bound = 0;

	for (unsigned int i = 0; i < cl->nreads && cl->reads[i].head <= idx; i++)
		bound = cl->reads[i].ring_head;
	return bound;
}

/* Remember this read of @cl, and forget those no entry left needs. */
static void note_read(struct cpu_log *cl, uint64_t head, uint64_t ring_head)
{
	struct log_read *last = &cl->reads[cl->nreads - 1];
	unsigned int drop = 0;

	/* No claim since the last read: an entry claimed next comes after this one. */
	if (head == last->head)
		last->ring_head = ring_head;
	else if (cl->nreads < FREELOG_READS)
		cl->reads[cl->nreads++] = (struct log_read){ head, ring_head };
	/* The entries left are at or above tail: reads above one at or below it. */
	while (drop + 1 < cl->nreads && cl->reads[drop + 1].head <= cl->tail)
		drop++;
	if (drop) {
		cl->nreads -= drop;
		memmove(cl->reads, cl->reads + drop, cl->nreads * sizeof(cl->reads[0]));
	}
}

static int push(struct freelog *fl, const struct hs_free_entry *e)
{
	if (fl->n == fl->cap) {
		if (fl->first) {
			fl->n -= fl->first;
			memmove(fl->pending, fl->pending + fl->first, fl->n * sizeof(*e));
			fl->first = 0;
		}
		if (fl->n == fl->cap) {
			size_t cap = fl->cap ? 2 * fl->cap : 4096;
			struct hs_free_entry *p = realloc(fl->pending, cap * sizeof(*e));

			if (!p)
				return -ENOMEM;
			fl->pending = p;
			fl->cap = cap;
		}
	}
	fl->pending[fl->n++] = *e;
	return 0;
}

static int by_stamp(const void *a, const void *b)
{
	uint64_t x = ((const struct hs_free_entry *)a)->stamp;
	uint64_t y = ((const struct hs_free_entry *)b)->stamp;

	return x < y ? -1 : x > y;
}

/*
 * Take @cl's stamped entries up to the first unstamped one. Returns the
 * ring's bound for this log (UINT64_MAX: none), lowered when memory ran
 * out for the pending frees, so that none is lost: they stay in the log.
 */
static uint64_t take(struct freelog *fl, struct cpu_log *cl, uint64_t ring_head)
{
	uint64_t head = __atomic_load_n(&cl->log->head, __ATOMIC_ACQUIRE);
	uint64_t bound = UINT64_MAX;

	while (cl->tail < head) {
		struct hs_free_entry *e = &cl->log->e[cl->tail & (HS_FREE_LOG_ENTRIES - 1)];
		struct hs_free_entry copy;

		copy.stamp = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE);
		if (!copy.stamp) {
			bound = unstamped_bound(cl, cl->tail);
			break;
		}
		copy.addr = e->addr;
		copy.id = e->id;
		if (push(fl, &copy)) {
			bound = copy.stamp - 1;
			break;
		}
		e->stamp = 0;
		cl->tail++;
		fl->taken++;
	}
	/* The entries' reads and clears come before the room is given back. */
	__atomic_store_n(&cl->log->tail, cl->tail, __ATOMIC_RELEASE);
	note_read(cl, head, ring_head);
	return bound;
}

uint64_t freelog__collect(struct freelog *fl, uint64_t head)
{
	uint64_t limit = head, before = fl->taken;

	for (unsigned int c = 0; c < fl->ncpus; c++) {
		uint64_t bound = take(fl, &fl->cpus[c], head);

		if (bound < limit)
			limit = bound;
	}
	/*
	 * By what was taken, not by where the pending end moved: push()
	 * moves the pending frees to the front when it runs out of room, and
	 * a sort skipped then left a later free ahead of earlier ones, which
	 * went out after the allocations that came after them (2 runs in 6
	 * of prog_mt 16 beside busy loops: hundreds of blocks "allocated
	 * again while live").
	 */
	if (fl->taken != before)
		qsort(fl->pending + fl->first, fl->n - fl->first, sizeof(*fl->pending), by_stamp);
	return limit;
}

bool freelog__next(struct freelog *fl, uint64_t seq, struct hs_free_entry *out)
{
	if (fl->first == fl->n || fl->pending[fl->first].stamp > seq)
		return false;
	*out = fl->pending[fl->first++];
	if (fl->first == fl->n)
		fl->first = fl->n = 0;
	return true;
}

uint64_t freelog__taken(const struct freelog *fl)
{
	return fl->taken;
}

void freelog__free(struct freelog *fl)
{
	if (!fl)
		return;
	munmap(fl->map, fl->map_size);
	free(fl->cpus);
	free(fl->pending);
	free(fl);
}

// SPDX-License-Identifier: MIT
/*
 * acct.c - whole-run accounting of one process (see acct.h). Called on
 * every allocation and free after the live table: a few additions, one
 * thread lookup (cached for runs of events from the same thread).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "acct.h"
#include "htab.h"

struct acct_thread {
	uint64_t last_addr;	/* its last allocation, 0 once freed */
};

int acct__init(struct acct *a)
{
	*a = (struct acct){ 0 };
	a->threads = htab__new(16, NULL, NULL);
	return a->threads ? 0 : -ENOMEM;
}

void acct__fini(struct acct *a)
{
	struct acct_thread *th;
	size_t pos = 0;

	while (a->threads && (th = htab__next(a->threads, &pos, NULL)))
		free(th);
	htab__free(a->threads);
	a->threads = NULL;
	free(a->stacks);
	a->stacks = NULL;
	a->nstacks = 0;
}

int acct__grow(struct acct *a, uint32_t id)
{
	uint32_t n = a->nstacks ? a->nstacks : 16;
	struct acct_stack *v;

	while (n <= id)
		n *= 2;
	v = realloc(a->stacks, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v + a->nstacks, 0, (n - a->nstacks) * sizeof(*v));
	a->stacks = v;
	a->nstacks = n;
	return 0;
}

struct acct_stack *acct__stack(const struct acct *a, uint32_t id)
{
	return id < a->nstacks ? &a->stacks[id] : NULL;
}

size_t acct__stack_memory(const struct acct *a)
{
	return a->nstacks * sizeof(*a->stacks);
}

/* @tid's entry, made if @create; NULL if not there (or no memory). */
static struct acct_thread *thread_of(struct acct *a, uint32_t tid, bool create)
{
	uint64_t h = htab_hash2(tid, 0);
	struct acct_thread *th;

	if (a->last && a->last_tid == tid)
		return a->last;
	th = htab__find(a->threads, h, tid);
	if (!th && create) {
		th = calloc(1, sizeof(*th));
		if (th && htab__add(a->threads, h, tid, th)) {
			free(th);
			th = NULL;
		}
	}
	if (th) {
		a->last = th;
		a->last_tid = tid;
	}
	return th;
}

/* Before @s's live values change: keep them if they are the peak's. */
static void touch(struct acct *a, struct stack *s, struct acct_stack *m)
{
	if (m->peak_gen != a->peak_gen) {
		s->peak_count = s->live_count;
		s->peak_bytes = s->live_bytes;
		m->peak_gen = a->peak_gen;
	}
	m->dirty = true;
	a->dirty = true;
}

bool acct__alloc(struct acct *a, struct stack *s, uint32_t id, uint32_t tid, uint64_t addr,
		 uint64_t size, uint64_t live_count, uint64_t live_bytes)
{
	struct acct_thread *th = thread_of(a, tid, true);

	touch(a, s, &a->stacks[id]);
	s->live_count++;
	s->live_bytes += size;
	s->allocs++;
	s->alloc_bytes += size;
	a->allocs++;
	a->alloc_bytes += size;
	if (th)
		th->last_addr = addr;
	if (live_bytes <= a->peak_bytes)
		return false;
	/* Every stack's live values are now its at-peak ones. */
	a->peak_bytes = live_bytes;
	a->peak_count = live_count;
	a->peak_gen++;
	return true;
}

void acct__peak_time(struct acct *a, uint64_t ts_ns)
{
	a->peak_ns = ts_ns;
}

void acct__release(struct acct *a, struct stack *s, uint32_t id, uint32_t tid, uint64_t addr,
		   uint64_t size, bool freed)
{
	struct acct_thread *th;

	touch(a, s, &a->stacks[id]);
	s->live_count--;
	s->live_bytes -= size;
	if (!freed)
		return;
	s->frees++;
	a->frees++;
	th = thread_of(a, tid, false);
	if (th && th->last_addr == addr) {
		s->temporary++;
		a->temporary++;
		th->last_addr = 0;
	}
}

void acct__at_peak(const struct acct *a, const struct stack *s, uint32_t id, uint64_t *count,
		   uint64_t *bytes)
{
	const struct acct_stack *m = acct__stack(a, id);
	/* Never charged (no marks): its live values, nothing. */
	bool unchanged = !m || m->peak_gen != a->peak_gen;

	*count = unchanged ? s->live_count : s->peak_count;
	*bytes = unchanged ? s->live_bytes : s->peak_bytes;
}

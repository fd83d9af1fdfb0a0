// SPDX-License-Identifier: MIT
/*
 * join.c - the live set and the whole run joined by (pid, stack) (see
 * join.h): the stacks interned without their flags in a unique-stack
 * table of the join's own (stacks.c), whose ids index the entries.
 */
#include <stdlib.h>
#include <string.h>

#include "model/join.h"

struct join {
	struct stacks *ids;		/* (pid, frames) -> entry index */
	struct hd_joined *v;
	size_t n, cap;
};

/* The entry of (@s's pid, frames), made if new; NULL: no memory. */
static struct hd_joined *entry_of(struct join *j, const struct stack *s)
{
	int id = stacks__intern(j->ids, s->pid, s->frames, s->depth, 0);

	if (id < 0)
		return NULL;
	if ((size_t)id < j->n)
		return &j->v[id];
	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 256;
		struct hd_joined *v = realloc(j->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		j->v = v;
		j->cap = cap;
	}
	j->v[j->n] = (struct hd_joined){ .stack = s };
	return &j->v[j->n++];
}

struct join *join__new(struct stack *const *live, size_t nl, struct stack *const *run, size_t nr)
{
	struct join *j = calloc(1, sizeof(*j));
	struct hd_joined *e;

	if (!j || !(j->ids = stacks__new()))
		goto fail;
	for (size_t i = 0; i < nl; i++) {
		if (!(e = entry_of(j, live[i])))
			goto fail;
		e->flags |= live[i]->flags;
		e->live_count += live[i]->live_count;
		e->live_bytes += live[i]->live_bytes;
	}
	for (size_t i = 0; i < nr; i++) {
		if (!(e = entry_of(j, run[i])))
			goto fail;
		e->flags |= run[i]->flags;
		e->run = run[i];
	}
	return j;
fail:
	join__free(j);
	return NULL;
}

void join__free(struct join *j)
{
	if (!j)
		return;
	stacks__free(j->ids);
	free(j->v);
	free(j);
}

const struct hd_joined *join__entries(const struct join *j, size_t *n)
{
	*n = j->n;
	return j->v;
}

static int by_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

uint32_t *join__pids(const struct join *j, size_t *n)
{
	uint32_t *v = malloc((j->n ? j->n : 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		v[i] = j->v[i].stack->pid;
	qsort(v, j->n, sizeof(*v), by_pid);
	for (size_t i = 0; i < j->n; i++)
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	return v;
}

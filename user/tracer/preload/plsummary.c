// SPDX-License-Identifier: MIT
/*
 * plsummary.c - a live table's snapshot into the -s summary (see
 * plsummary.h). The blocks are grouped by stack id (sorted copies: the
 * snapshot's own order is its dump's), each stack rebuilt once from the
 * table, as ltdump.c rebuilds it for the records.
 */
#include <errno.h>
#include <stdlib.h>

#include "plsummary.h"

/* A live block's stack and size, sorted by stack. */
struct blk {
	uint32_t stack;
	uint64_t size;
};

static int by_stack(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int add_module(void *arg, const struct lt_mod *m)
{
	struct mapping map = { .start = m->start, .end = m->end, .offset = m->off,
			       .path = (char *)m->path };

	snprintf(map.build_id, sizeof(map.build_id), "%s", m->build_id[0] ? m->build_id : "-");
	return sum_proc__map(arg, &map);
}

/* Stack @id's blocks, @bytes in @count, into @p. */
static int add_stack(struct sum_proc *p, const struct lt_snap *snap, struct lt_out *o,
		     uint32_t id, uint64_t bytes, uint64_t count)
{
	const uint64_t *frames = o->words;
	uint32_t depth = 0, cut = 0;

	if (id && lt_stack__words(snap->v, id, o->words, &depth, &cut))
		depth = 0;
	if (id && o->xlate) {
		const uint64_t *x = o->xlate(o->xarg, snap, id, o->words, &depth, &cut);

		if (x)
			frames = x;
	}
	return sum_proc__stack(p, frames, depth, cut, bytes, count);
}

int plsummary__add(struct summary *s, const struct lt_snap *snap, const char *comm,
		   struct lt_out *o)
{
	struct sum_proc *p = summary__proc(s, snap->pid, comm);
	struct blk *v = malloc((snap->n ? snap->n : 1) * sizeof(*v));
	int err = p && v ? 0 : -ENOMEM;
	size_t i = 0;

	if (!err)
		err = lt_modules(snap->v, add_module, p);
	for (uint64_t k = 0; !err && k < snap->n; k++)
		v[k] = (struct blk){ snap->items[k].stack, snap->items[k].size };
	if (!err)
		qsort(v, snap->n, sizeof(*v), by_stack);
	while (!err && i < snap->n) {
		uint64_t bytes = 0, count = 0;
		size_t j = i;

		for (; j < snap->n && v[j].stack == v[i].stack; j++) {
			bytes += v[j].size;
			count++;
		}
		err = add_stack(p, snap, o, v[i].stack, bytes, count);
		p->stacks++;
		i = j;
	}
	if (p) {
		p->live_count = snap->n;
		p->live_bytes = snap->bytes;
		p->allocated = snap->n != 0;
	}
	free(v);
	return err;
}

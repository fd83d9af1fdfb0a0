// SPDX-License-Identifier: MIT
/*
 * plsummary.c - a live table's snapshot into the -s summary (see
 * plsummary.h). The blocks are grouped by stack id (sorted copies: the
 * snapshot's own order is its dump's), each stack rebuilt once from the
 * table, as ltdump.c rebuilds it for the records; its interpreter
 * frames' names copied into the summary's own frame table, since the
 * image's are forgotten when it is closed, before the summary is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Where an image's frame names are copied from and to (plsummary__add()). */
struct names {
	struct frametab *from, *to;
	bool creators;			/* the boundary named too (@to's) */
	uint64_t v[LT_MAX_DEPTH];	/* a stack's frames, the synthetic ones @to's */
};

/*
 * @frames[@depth] of process @pid with each interpreter frame @nm->from
 * names, and the thread boundary (livetable.h's LT_CREATOR_FRAME, where
 * its header says the stacks may hold it), interned into @nm->to: @nm->v,
 * or @frames itself when there is none (or no @to). Returns NULL without
 * memory.
 */
static const uint64_t *copy_names(struct names *nm, uint32_t pid, const uint64_t *frames,
				  uint32_t depth)
{
	bool any = false;

	/* Deeper than a table's stack (never: xlate writes at most that many): as they are. */
	if (depth > LT_MAX_DEPTH)
		return frames;
	for (uint32_t k = 0; (nm->from || nm->creators) && k < depth; k++) {
		struct sym_frame f;
		uint64_t a = frames[k];
		int err = -ENOENT;

		if (!rec_is_frame_addr(a)) {
			nm->v[k] = a;
			continue;
		}
		if (a == LT_CREATOR_FRAME && nm->creators)
			err = frametab__intern(nm->to, pid, FRAMETAB_CREATOR_KIND, FRAMETAB_CREATOR_FUNC,
					       NULL, 0, &a);
		else if (nm->from && frametab__symbolize(nm->from, pid, a, &f) && f.status == SYM_OK &&
			 f.kind && strcmp(f.kind, "jit"))
			err = frametab__intern(nm->to, pid, f.kind, f.func, f.file,
					       f.line > 0 ? (uint32_t)f.line : 0, &a);
		if (err == -ENOMEM)
			return NULL;
		/*
		 * Not named (or @to full): an address @to never gives (its ids
		 * count up from the range's start), so that it is shown as a
		 * frame without a record, never as another's.
		 */
		nm->v[k] = err ? REC_FRAME_END - 1 : a;
		any = true;
	}
	return any ? nm->v : frames;
}

/* Stack @id's blocks, @bytes in @count, into @p. */
static int add_stack(struct sum_proc *p, const struct lt_snap *snap, struct lt_out *o,
		     struct names *nm, uint32_t id, uint64_t bytes, uint64_t count)
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
	frames = copy_names(nm, (uint32_t)snap->pid, frames, depth);
	if (!frames)
		return -ENOMEM;
	return sum_proc__stack(p, frames, depth, cut, bytes, count);
}

int plsummary__add(struct summary *s, const struct lt_snap *snap, const char *comm,
		   struct lt_out *o, struct frametab *from, struct frametab *to,
		   const struct plsum_peak *peak)
{
	struct sum_proc *p = summary__proc(s, snap->pid, comm);
	struct blk *v = malloc((snap->n ? snap->n : 1) * sizeof(*v));
	struct names *nm = malloc(sizeof(*nm));
	int err = p && v && nm ? 0 : -ENOMEM;
	size_t i = 0;

	if (!err) {
		*nm = (struct names){ .from = to ? from : NULL, .to = to,
			.creators = to && __atomic_load_n(&snap->v->h->creators, __ATOMIC_ACQUIRE) };
		err = lt_modules(snap->v, add_module, p);
	}
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
		err = add_stack(p, snap, o, nm, v[i].stack, bytes, count);
		p->stacks++;
		i = j;
	}
	if (p) {
		p->live_count = snap->n;
		p->live_bytes = snap->bytes;
		p->allocated = snap->n != 0;
	}
	if (p && peak && peak->bytes) {
		/* The reads' peak, or the end's live set where that holds more. */
		bool end = snap->bytes > peak->bytes;

		p->allocated = true;
		p->peak = end ? snap->bytes : peak->bytes;
		p->peak_count = end ? snap->n : peak->count;
		p->peak_ago_ms = end ? 0 : peak->ago_ms;
		p->peak_read_ms = peak->read_ms;
	}
	free(nm);
	free(v);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * splice.c - interpreter frames among native ones (see splice.h; the rule
 * was checked against gdb's own unwind of Debian's python3.11 re-entering
 * the eval loop through map(), a class call and a generator: 4 eval
 * frames, 4 segments).
 */
#include "interp/splice.h"

struct out {
	uint64_t *v;
	uint32_t n, max;
	uint32_t flags;
};

static void put(struct out *o, uint64_t a)
{
	if (o->n < o->max)
		o->v[o->n++] = a;
	else
		o->flags |= SPLICE_DEPTH;
}

/* Segments [from, to) of @in, in order. */
static void put_segments(struct out *o, const struct splice_in *in, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++)
		for (uint32_t i = k ? in->seg_end[k - 1] : 0; i < in->seg_end[k]; i++)
			put(o, in->iframes[i]);
}

uint32_t splice__frames(const struct splice_in *in, uint64_t *out, uint32_t max, uint32_t *flags)
{
	struct out o = { .v = out, .max = max };
	uint32_t nevals = 0, seen = 0;
	bool mismatch;

	for (uint32_t i = 0; i < in->nnative; i++)
		nevals += in->is_eval(in->ctx, in->native[i]);
	/* More segments than eval frames with a whole native stack: not exact. */
	mismatch = (nevals < in->nseg && !in->native_cut) || (nevals > in->nseg && !in->interp_cut);
	for (uint32_t i = 0; i < in->nnative; i++) {
		if (!in->is_eval(in->ctx, in->native[i])) {
			put(&o, in->native[i]);
			continue;
		}
		seen++;
		if (seen > in->nseg) {
			put(&o, in->native[i]);	/* no segment left for it */
			continue;
		}
		/* The outermost eval frame of a mismatch takes the segments left. */
		if (seen == nevals && mismatch)
			put_segments(&o, in, seen - 1, in->nseg);
		else
			put_segments(&o, in, seen - 1, seen);
	}
	/* Segments of no eval frame: past a cut, or (none at all) a mismatch. */
	if (nevals < in->nseg && (in->native_cut || !nevals))
		put_segments(&o, in, nevals, in->nseg);
	if (mismatch)
		o.flags |= SPLICE_ORDER;
	*flags = o.flags;
	return o.n;
}

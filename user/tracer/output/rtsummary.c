// SPDX-License-Identifier: MIT
/*
 * rtsummary.c - the -s summary's lines apart from the program's stacks
 * (see rtsummary.h). Only stacks with live blocks are looked at, and
 * only their innermost frames that lie in the C runtime are symbolized
 * (suppress__stack()): usually frame 0 alone.
 */
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "pyexit.h"
#include "records.h"
#include "rtsummary.h"

void rt_summary__mark(struct sum_proc *const *v, size_t n, suppress_lookup_fn lookup, void *ctx,
		      const struct summary_opts *so, struct suppress_tally *all)
{
	struct stack *st;

	if (!so || !so->runtime_apart || !n)
		return;
	st = calloc(1, sizeof(*st) + REC_MAX_DEPTH * sizeof(*st->frames));
	if (!st) {
		elog("out of memory: the C runtime's allocations are shown among the program's");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sum_proc *p = v[i];

		for (size_t k = 0; k < p->n; k++) {
			struct sum_stack *s = &p->v[k];
			const uint64_t *f = sum_proc__frames(p, s, st->frames);
			int j;

			st->pid = (uint32_t)p->pid;
			st->depth = s->depth < REC_MAX_DEPTH ? s->depth : REC_MAX_DEPTH;
			if (f != st->frames)
				memcpy(st->frames, f, st->depth * sizeof(*f));
			j = suppress__stack(suppress__runtime(), st, lookup, ctx);
			if (j < 0)
				continue;
			s->runtime = true;
			suppress__tally_add(all, j, s->bytes, s->count);
		}
	}
	free(st);
}

void rt_summary__write(const struct suppress_tally *all, struct sum_proc *const *v, size_t n,
		       const struct summary_opts *so, FILE *out)
{
	char line[512];

	if (all && all->count)
		flog(out, "the C runtime's own, not above: %s, kept for the process's lifetime "
		     "(--no-default-suppressions shows them)",
		     suppress__tally_text(all, line, sizeof(line)));
	for (size_t i = 0; i < n; i++) {
		const struct sum_proc *p = v[i];

		if (p->allocated && pyexit__freed(p->comm, p->peak, p->live_bytes))
			flog(out, "%s", pyexit__text(line, sizeof(line), p->pid, p->comm, p->peak,
						     p->peak_count, p->peak_ago_ms, p->live_bytes,
						     so ? so->log : NULL, p->peak_read_ms));
	}
}

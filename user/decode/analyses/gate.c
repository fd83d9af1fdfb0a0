// SPDX-License-Identifier: MIT
/*
 * gate.c - the CI gates on a log (see gate.h): the selected live set's
 * stacks and the `proc` records' peaks into the common gate, frames
 * symbolized as every heapdecode report names them.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyses/gate.h"

static void lookup(void *ctx, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	hd_model__lookup(ctx, pid, addr, f);
}

int hd_gate__run(struct hd_model *m, const struct leakgate_opts *o, FILE *out)
{
	struct leakgate *g = leakgate__new(o);
	size_t n = 0, np = 0;
	struct stack **v = g ? hd_model__live_stacks(m, &n) : NULL;
	struct rs_proc **procs = v ? hd_model__procs(m, &np) : NULL;
	int err = 0;

	if (!g)
		return -EINVAL;
	if (!v)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		const struct rs_proc *p = hd_model__proc(m, v[i]->pid);

		/* With --base, what shrank is no leak. */
		if ((int64_t)v[i]->live_bytes > 0 && (int64_t)v[i]->live_count > 0)
			err = leakgate__stack(g, v[i], p ? p->comm : NULL, lookup, m);
	}
	for (size_t i = 0; !err && i < np; i++)
		leakgate__peak(g, (uint32_t)procs[i]->pid, procs[i]->comm, procs[i]->peak,
			       procs[i]->peak_count);
	if (!err)
		err = leakgate__finish(g, out);
	free(v);
	leakgate__free(g);
	return err;
}

/* SPDX-License-Identifier: MIT */
/*
 * growth.h - the leak suspects of a log of several dumps: the stacks
 * whose live bytes at the last dump exceed those at the first (from the
 * whole-run `stack` records, dump by dump), and in how many of the
 * intervals between consecutive dumps they grew.
 */
#ifndef HEAPDECODE_GROWTH_H
#define HEAPDECODE_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* A stack's growth over the dumps of a log. */
struct hd_growth {
	const struct stack *s;		/* a whole-run stack of the model */
	int64_t bytes, count;		/* last dump minus first */
	unsigned int grew, intervals;	/* intervals in which it grew, of all */
};

/*
 * The stacks that grew, most bytes first, into a malloc'ed *@v of *@n.
 * Returns 0, -ENOENT if the log has no whole-run stack record, -ENOMEM.
 */
int hd_growth__list(struct hd_model *m, struct hd_growth **v, size_t *n);

#endif /* HEAPDECODE_GROWTH_H */

// SPDX-License-Identifier: MIT
/* pace.c - the loader's sleep between reads of the ring buffer: pace.h. */
#include "pace.h"

void pace__init(struct pace *p, uint64_t size, int min_ms, int max_ms)
{
	*p = (struct pace){ .target = size / 8, .min_ms = min_ms, .max_ms = max_ms };
}

int pace__next(struct pace *p, uint64_t head, double now)
{
	uint64_t bytes = head - p->last_head;
	double dt = now - p->last_t, ms;
	int first = p->last_t == 0;

	p->last_head = head;
	p->last_t = now;
	if (first || !bytes || dt <= 0)
		return p->max_ms;
	/* When the ring would hold the target at this rate. */
	ms = 1000.0 * dt * (double)p->target / (double)bytes;
	if (ms >= p->max_ms)
		return p->max_ms;
	return ms <= p->min_ms ? p->min_ms : (int)(ms + 0.5);
}

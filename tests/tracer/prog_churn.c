// SPDX-License-Identifier: MIT
/*
 * prog_churn.c - 100,000 mixed malloc, calloc, realloc and free calls
 * over 512 slots from one call site each, then prints what it left live
 * ("live COUNT BYTES") and exits. Enough records to wrap a small ring
 * buffer many times: a realloc releases its old block by the records'
 * positions in the ring (docs/DESIGN.md, "Order without a clock"), so a
 * position wrong after a wrap shows as a block wrongly kept or dropped.
 */
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 512
#define CALLS 100000

static void *slot[SLOTS];
static size_t bytes[SLOTS];

__attribute__((noinline)) static void churn_alloc(unsigned int s, unsigned int i)
{
	size_t n = 16 + (i * 7919u) % 2048;

	slot[s] = (i & 1) ? malloc(n) : calloc(1, n);
	bytes[s] = slot[s] ? n : 0;
}

__attribute__((noinline)) static void churn_realloc(unsigned int s, unsigned int i)
{
	size_t n = 32 + (i * 104729u) % 8192;
	void *p = realloc(slot[s], n);

	if (p) {
		slot[s] = p;
		bytes[s] = n;
	}
}

int main(void)
{
	size_t count = 0, total = 0;

	for (unsigned int i = 0; i < CALLS; i++) {
		unsigned int s = (i * 2654435761u) % SLOTS;

		if (!slot[s])
			churn_alloc(s, i);
		else if (i % 3 == 0)
			churn_realloc(s, i);
		else {
			free(slot[s]);
			slot[s] = NULL;
			bytes[s] = 0;
		}
	}
	for (unsigned int s = 0; s < SLOTS; s++) {
		count += slot[s] != NULL;
		total += bytes[s];
	}
	printf("live %zu %zu\n", count, total);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * prog_inline.c - one leak of 42 bytes made inside two inlined functions:
 * inner (line 11) inlined into mid (line 12) inlined into outer_fn (14).
 */
#include <stdlib.h>

void *volatile keep;

/* always_inline: inlined even under the tests' -fno-inline. */
static inline __attribute__((always_inline)) void *inner(int n) { return malloc((size_t)n); }
static inline __attribute__((always_inline)) void *mid(int n) { return inner(n * 2); }

__attribute__((noinline)) void outer_fn(void) { keep = mid(21); }

int main(void)
{
	outer_fn();
	return 0;
}

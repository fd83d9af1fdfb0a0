// SPDX-License-Identifier: MIT
/*
 * prog_holder.c - one leaking helper, two callers (test_headline.sh): the
 * helper grow_buffer, inlined into both, leaks 2 blocks of 16 KiB under
 * read_a (in main's thread) and 2 under read_b (in a thread of its own):
 * 64.0 KiB in 4 blocks, more than big_table's one block of 40 KiB, though
 * each of its stacks holds less. Built with the tests' -fno-inline: only
 * the always_inline helper is inlined.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void *volatile kept[8];
static int nkept;

static inline __attribute__((always_inline)) void grow_buffer(size_t n)
{
	char *b = malloc(n);

	memset(b, 1, n);
	kept[nkept++] = b;
}

__attribute__((noinline)) void read_a(void)
{
	grow_buffer(16384);
	grow_buffer(16384);
}

__attribute__((noinline)) void read_b(void)
{
	grow_buffer(16384);
	grow_buffer(16384);
}

__attribute__((noinline)) void big_table(void)
{
	kept[nkept++] = calloc(1, 40960);
}

static void *reader(void *arg)
{
	(void)arg;
	read_b();
	return NULL;
}

int main(void)
{
	pthread_t t;

	big_table();
	read_a();
	if (pthread_create(&t, NULL, reader, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}

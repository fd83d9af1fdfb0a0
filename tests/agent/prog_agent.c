// SPDX-License-Identifier: MIT
/*
 * prog_agent.c - a traced program for tests/agent/test_agent.sh whose
 * heap is known to the byte: at "go" on standard input it allocates 100
 * blocks of 1000 bytes (hold_small) and 10 of 65536 (hold_big), frees 50
 * of the small ones, says "done PID" and holds the rest live until its
 * input ends, then frees them. Live: 60 blocks, 705360 bytes; allocated: 110, 755360.
 * Only read(2) and write(2) after "go": no stdio buffer joins the heap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SMALL_N 100
#define SMALL 1000
#define BIG_N 10
#define BIG 65536

static void *small[SMALL_N], *big[BIG_N];

static __attribute__((noinline)) void hold_small(void)
{
	for (int i = 0; i < SMALL_N; i++)
		small[i] = malloc(SMALL);
}

static __attribute__((noinline)) void hold_big(void)
{
	for (int i = 0; i < BIG_N; i++)
		big[i] = malloc(BIG);
}

static int wait_word(const char *w)
{
	char buf[64];
	size_t n = 0;

	while (n + 1 < sizeof(buf)) {
		ssize_t r = read(0, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return strcmp(buf, w) ? -1 : 0;
		}
		n++;
	}
	return -1;
}

int main(void)
{
	char line[64];
	int len;

	len = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	if (write(1, line, (size_t)len) != len || wait_word("go"))
		return 1;
	hold_small();
	hold_big();
	for (int i = 0; i < SMALL_N; i += 2)
		free(small[i]);
	len = snprintf(line, sizeof(line), "done %d\n", (int)getpid());
	if (write(1, line, (size_t)len) != len)
		return 1;
	/* Held until the test closes our input. */
	while (read(0, line, sizeof(line)) > 0)
		;
	/* Freed, so that the compiler keeps them (an unread malloc is dropped). */
	for (int i = 0; i < BIG_N; i++)
		free(big[i]);
	for (int i = 1; i < SMALL_N; i += 2)
		free(small[i]);
	return 0;
}

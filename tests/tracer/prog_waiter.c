// SPDX-License-Identifier: MIT
/*
 * prog_waiter.c - a process to attach to: it allocates before tracing can
 * start, says "ready", and then for each line on stdin does one step:
 *   leak N SIZE   leak N blocks of SIZE bytes from after_attach_leak()
 *   burst N       malloc+free N times from burst() (to fill a ring buffer)
 *   wide N        leak N blocks of 100 bytes from wide_leak(), whose frame
 *                 holds 32 KiB of locals: each stack copy over 32 KiB
 *   free-old      free the blocks allocated before "ready"
 *   exit          exit (with its leaks live)
 * and answers "done" after each. A stdin EOF exits too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *before[8];

__attribute__((noinline)) static void before_attach_leak(void)
{
	for (int i = 0; i < 8; i++)
		before[i] = malloc(999);
}

__attribute__((noinline)) static void *after_attach_leak(size_t size)
{
	return malloc(size);
}

__attribute__((noinline)) static void burst(long n)
{
	for (long i = 0; i < n; i++) {
		void *volatile p = malloc(32);

		free(p);
	}
}

/* Its 32 KiB array written, so its pages are there to copy. */
__attribute__((noinline)) static int wide_leak(long n)
{
	volatile char pad[32768];

	for (size_t i = 0; i < sizeof(pad); i += 512)
		pad[i] = (char)i;
	for (long i = 0; i < n; i++)
		if (!after_attach_leak(100))
			return -1;
	return pad[0];
}

int main(void)
{
	char line[128];

	before_attach_leak();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long n = 0, size = 0;

		if (sscanf(line, "leak %ld %ld", &n, &size) == 2) {
			for (long i = 0; i < n; i++)
				if (!after_attach_leak((size_t)size))
					return 1;
		} else if (sscanf(line, "wide %ld", &n) == 1) {
			if (wide_leak(n) < 0)
				return 1;
		} else if (sscanf(line, "burst %ld", &n) == 1) {
			burst(n);
		} else if (!strncmp(line, "free-old", 8)) {
			for (int i = 0; i < 8; i++)
				free(before[i]);
		} else if (!strncmp(line, "exit", 4)) {
			break;
		}
		printf("done\n");
		fflush(stdout);
	}
	return 0;
}

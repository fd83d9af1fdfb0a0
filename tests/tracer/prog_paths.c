// SPDX-License-Identifier: MIT
/*
 * prog_paths.c - millions of allocations, each from a call path of its
 * own: down() recurses LEVELS deep (default 22), taking at each level one
 * of two call sites by the next bit of the path's number, so the 2^LEVELS
 * leaves are reached by 2^LEVELS distinct stacks; each leaf allocates one
 * block of 16 + (path % 64) bytes and keeps it. What a tracer's tables
 * and logs cost per unique stack (issue 31's "millions of call paths").
 *
 *   prog_paths [LEVELS [wait] [free]]
 *
 * wait: say "ready PID" and read a line before allocating, then say
 * "done" and read a line before going on (a tracer attached with -p has
 * the whole live set then); free: free every block at the end, from
 * main, one stack for all the frees. Live at exit without free: 2^LEVELS
 * blocks, sum over p < 2^LEVELS of 16 + p % 64 bytes, and main's array of
 * their addresses (8 * 2^LEVELS bytes; with free, it alone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void **blocks;

__attribute__((noinline)) static void leaf(unsigned long path)
{
	void *p = malloc(16 + path % 64);

	if (!p)
		abort();
	blocks[path] = p;
}

/*
 * Two call sites per level, each followed by code of its own, so that
 * neither the compiler's tail merging nor a sibling call folds them into
 * one return address.
 */
__attribute__((noinline)) static void down(int level, unsigned long path, unsigned long bits)
{
	if (!level) {
		leaf(path);
		return;
	}
	if (bits & 1) {
		down(level - 1, path, bits >> 1);
		__asm__ volatile("nop" ::: "memory");
	} else {
		down(level - 1, path, bits >> 1);
		__asm__ volatile("nop; nop" ::: "memory");
	}
}

static void wait_line(const char *say)
{
	char line[64];

	printf("%s\n", say);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(1);
}

int main(int argc, char **argv)
{
	int levels = argc > 1 ? atoi(argv[1]) : 22;
	int wait = 0, do_free = 0;
	unsigned long n;
	char ready[32];

	for (int i = 2; i < argc; i++) {
		wait |= !strcmp(argv[i], "wait");
		do_free |= !strcmp(argv[i], "free");
	}
	if (levels < 1 || levels > 28) {
		fprintf(stderr, "usage: prog_paths [LEVELS (1..28) [wait] [free]]\n");
		return 2;
	}
	n = 1ul << levels;
	blocks = calloc(n, sizeof(*blocks));
	if (!blocks)
		return 1;
	snprintf(ready, sizeof(ready), "ready %d", (int)getpid());
	if (wait)
		wait_line(ready);
	for (unsigned long path = 0; path < n; path++)
		down(levels, path, path);
	if (wait)
		wait_line("done");
	if (do_free) {
		for (unsigned long path = 0; path < n; path++)
			free(blocks[path]);
	}
	return 0;
}

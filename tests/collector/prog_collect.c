// SPDX-License-Identifier: MIT
/*
 * prog_collect.c - the preload collector's test program (test_preload.sh):
 * one case per argument, each leaving a known live set from its own
 * function, and checking in place what only the program can see.
 *
 *   align    every aligned entry point at 16..4096: alignment checked,
 *            one block each left live (size = alignment + 1); memalign
 *            at 24 and 0
 *   usable   malloc(100), written up to malloc_usable_size(), left live;
 *            then realloc() to 5000 and 50 keeps the bytes
 *   fork     111 bytes live, fork: the child adds 222 and exits, the
 *            parent waits and adds 333
 *   exec     444 bytes live, then exec itself as "after-exec": 555 live
 *   sample COUNT  COUNT x 64 and COUNT/64 x 8192 bytes live (each second
 *            allocation freed) from two functions
 *   signal   666 bytes live, "ready", a line read from stdin (the test
 *            sends its signal first), then 777 more
 *   interval allocate and free until $HEAPSNOOP_OUTPUT holds an interval
 *            dump (10 s at most)
 *   fds      prints "fds N": the open file descriptors but 0, 1, 2 and
 *            the one listing /proc/self/fd; and "preload X" for each
 *            LD_PRELOAD entry; 999 bytes live
 *   deep N   1234 bytes live from deep_recurse N calls deep (frame 0 in
 *            the innermost; main, case_deep and N of deep_recurse are
 *            N + 2 frames above _start's 3), 4321 from case_deep
 * Prints "ok CASE" or "BAD CASE: why" and exits 0 or 1.
 */
#include <dirent.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int bad;
static void *volatile keep, *volatile keep2;	/* blocks left live on purpose */

static void expect(int cond, const char *what, size_t align)
{
	if (!cond) {
		printf("BAD %s at %zu\n", what, align);
		bad = 1;
	}
}

static void align_posix(size_t a)
{
	void *p = NULL;

	expect(!posix_memalign(&p, a, a + 1) && !((uintptr_t)p % a), "posix_memalign", a);
}

static void align_aligned_alloc(size_t a)
{
	void *p = aligned_alloc(a, a + 1);

	expect(p && !((uintptr_t)p % a), "aligned_alloc", a);
}

static void align_memalign(size_t a)
{
	void *p = memalign(a, a + 1);

	expect(p && !((uintptr_t)p % a), "memalign", a);
}

static void align_valloc(void)
{
	void *p = valloc(4097), *q = pvalloc(4097);
	long page = sysconf(_SC_PAGESIZE);

	expect(p && !((uintptr_t)p % page), "valloc", page);
	expect(q && !((uintptr_t)q % page), "pvalloc", page);
	expect(q && malloc_usable_size(q) >= 8192, "pvalloc rounds up", page);
}

/* memalign's odd alignments: 24 is raised to 32, 0 taken as 1. */
static void align_odd(void)
{
	void *p = memalign(24, 10), *q = memalign(0, 10);

	expect(p && !((uintptr_t)p % 32), "memalign 24", 24);
	expect(q != NULL, "memalign 0", 0);
}

static void case_align(void)
{
	for (size_t a = 16; a <= 4096; a *= 2) {
		align_posix(a);
		align_aligned_alloc(a);
		align_memalign(a);
	}
	align_valloc();
	align_odd();
}

static void case_usable(void)
{
	unsigned char *p = malloc(100), *q;
	size_t n = malloc_usable_size(p);

	expect(n >= 100, "usable size", n);
	memset(p, 0xab, n);
	q = malloc(100);
	memset(q, 0x5a, 100);
	q = realloc(q, 5000);
	expect(q && q[0] == 0x5a && q[99] == 0x5a, "realloc kept the bytes", 5000);
	q = realloc(q, 50);
	expect(q && q[49] == 0x5a, "realloc down kept the bytes", 50);
	free(q);
	expect(p[n - 1] == 0xab, "the last usable byte", n);
}

static void fork_child_alloc(void)
{
	keep = malloc(222);
}

static void fork_parent_alloc(void)
{
	keep = malloc(333);
}

static void case_fork(void)
{
	pid_t pid;
	int st;

	keep = malloc(111);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		fork_child_alloc();
		exit(0);
	}
	waitpid(pid, &st, 0);
	expect(WIFEXITED(st) && !WEXITSTATUS(st), "child exit", 0);
	fork_parent_alloc();
}

static void case_after_exec(void)
{
	keep = malloc(555);
}

static void case_exec(char *self)
{
	keep = malloc(444);
	fflush(stdout);
	execl(self, self, "after-exec", (char *)NULL);
	expect(0, "exec", 0);
}

static void *sample_small(void)
{
	return malloc(64);
}

static void *sample_big(void)
{
	return malloc(8192);
}

static void case_sample(long count)
{
	for (long i = 0; i < 2 * count; i++) {
		void *p = sample_small();

		if (i & 1)
			free(p);
	}
	for (long i = 0; i < 2 * count / 64; i++) {
		void *p = sample_big();

		if (i & 1)
			free(p);
	}
}

static void case_signal(void)
{
	char line[16];

	keep = malloc(666);
	printf("ready\n");
	fflush(stdout);
	expect(fgets(line, sizeof(line), stdin) != NULL, "a line", 0);
	keep = malloc(777);	/* the dump the signal asked for comes first */
}

static bool has_interval_dump(const char *path)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(path, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "dump reason=interval") != NULL;
	if (f)
		fclose(f);
	return found;
}

static void case_interval(void)
{
	const char *out = getenv("HEAPSNOOP_OUTPUT");
	time_t end = time(NULL) + 10;

	keep = malloc(888);
	while (out && !has_interval_dump(out) && time(NULL) < end)
		for (int i = 0; i < 1000; i++)
			free(malloc(32));
	expect(out && has_interval_dump(out), "an interval dump", 0);
}

/* @n calls of itself, the innermost allocating: never a tail call. */
__attribute__((noinline)) static void *deep_recurse(long n)
{
	void *p = n > 1 ? deep_recurse(n - 1) : malloc(1234);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void case_deep(long n)
{
	keep = deep_recurse(n);
	keep2 = malloc(4321);
}

static void case_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	const char *pre = getenv("LD_PRELOAD");
	struct dirent *e;
	int n = 0;

	keep = malloc(999);
	expect(d != NULL, "/proc/self/fd", 0);
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d))
			n++;
	}
	if (d)
		closedir(d);
	printf("fds %d\n", n);
	if (pre && *pre)
		printf("preload %s\n", pre);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	if (!strcmp(c, "align"))
		case_align();
	else if (!strcmp(c, "usable"))
		case_usable();
	else if (!strcmp(c, "fork"))
		case_fork();
	else if (!strcmp(c, "exec"))
		case_exec(argv[0]);
	else if (!strcmp(c, "after-exec"))
		case_after_exec();
	else if (!strcmp(c, "signal"))
		case_signal();
	else if (!strcmp(c, "interval"))
		case_interval();
	else if (!strcmp(c, "sample") && argc > 2)
		case_sample(atol(argv[2]));
	else if (!strcmp(c, "fds"))
		case_fds();
	else if (!strcmp(c, "deep") && argc > 2)
		case_deep(atol(argv[2]));
	else
		return printf("BAD usage\n"), 2;
	printf("%s %s\n", bad ? "BAD" : "ok", c);
	return bad;
}

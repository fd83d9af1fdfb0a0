// SPDX-License-Identifier: MIT
/*
 * prog_death.c - the collector's test program for the ways a process
 * ends (tests/collector/test_death.sh): it keeps its own list of its live
 * blocks (ownlist.h) in a file mapped shared, so that the list survives
 * kill -9, marking each call before it and settling it after, and ends
 * as asked. Every allocator call is made from a function in section
 * hsops, so a checker tells the program's blocks from the C library's by
 * frame 0. A second copy of the list in private memory is what a forked
 * child sees of it at the fork (copy-on-write), even while other threads
 * go on: the child writes it out as its own list.
 *
 *   prog_death LIST CASE [N [K]]
 *   exit _exit _Exit quick_exit abort segv bus fpe overflow
 *            300 blocks, a third freed, a third realloc'ed, then that end
 *   kill     the same, "ready PID", then waits to be killed
 *   sigchain a SIGSEGV handler that recovers once, then one that gives up
 *   fork     the mix, then a child (its own list LIST.PID) that frees some,
 *            allocates 20 and _exits; the parent adds 10 and exits
 *   forkpaths  the same, 600 blocks each from a call path of its own (12
 *            levels, prog_paths' way) made before the fork: a table whose
 *            stacks have grown
 *   threads N          N threads churning; "ready PID" once each did
 *                      20000 calls; waits to be killed
 *   threads-exit N     main _exits while they churn
 *   threads-sig N      as threads, main blocking the fatal signals: one
 *                      sent to the process lands on a thread mid-call
 *   threads-fork N     the threads at rest at the fork; the child _exits
 *   threads-forkcow N K  K forks while they churn, no rest: each child
 *                      writes its list as the fork left it, frees some,
 *                      allocates some, _exits
 *   stopmix  the mix and exit (the collector's test stops kill it in it)
 *   forkstop the mix, a fork whose child the test stops kill, the parent
 *            waits for it and exits
 *   badhello a hello with a wrong token to heapsnoop's socket, then exit
 *   badversion  a hello of version 2 (its 72 bytes, no descriptors) with
 *            heapsnoop's token, as a collector of another heapsnoop sends
 *            one, then exit
 *   forklate the mix; a child holding 30000 more blocks (not in any list)
 *            _exits, then 3 children one after the other, each its own
 *            list, _exit; "ready PID", then _exit (heapsnoop, its output
 *            a pipe no one reads yet, is held in the first child's
 *            section while the others' hellos wait)
 *   storm N  the mix, then N threads one after the other, each
 *            allocating and freeing one block, then exit
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "block.h"
#include "heapsnoop/livetable.h"
#include "ownlist.h"

static struct ownlist *L, *P;	/* the list in the file; its private copy */
static size_t list_len;
static char list_path[4096];

#define OPS __attribute__((noinline, section("hsops")))
extern char __start_hsops[], __stop_hsops[];

/* Both copies of the list: the file's (kill -9) and the private one (fork). */
#define SET(t, i, field, v) do { L->own[(t) * OWN_SLOTS + (i)].field = (v); \
				 P->own[(t) * OWN_SLOTS + (i)].field = (v); } while (0)

static void set_state(int t, int i, uint32_t s)
{
	__atomic_store_n(&L->own[t * OWN_SLOTS + i].state, s, __ATOMIC_RELEASE);
	__atomic_store_n(&P->own[t * OWN_SLOTS + i].state, s, __ATOMIC_RELEASE);
}

static uint32_t state_of(int t, int i)
{
	return __atomic_load_n(&P->own[t * OWN_SLOTS + i].state, __ATOMIC_ACQUIRE);
}

static int sampled(const void *p)
{
	return p && pl_block_ours(p);
}

OPS static void op_alloc(int t, int i, size_t n)
{
	void *p = NULL;

	SET(t, i, size, n);
	set_state(t, i, OWN_ALLOC);
	switch (n % 3) {
	case 0: p = malloc(n); break;
	case 1: p = calloc(1, n); break;
	case 2: if (posix_memalign(&p, 64, n)) p = NULL; break;
	}
	SET(t, i, ptr, (uintptr_t)p);
	SET(t, i, sampled, (uint32_t)sampled(p));
	set_state(t, i, p ? OWN_HELD : OWN_EMPTY);
}

OPS static void op_free(int t, int i)
{
	set_state(t, i, OWN_FREE);
	free((void *)(uintptr_t)P->own[t * OWN_SLOTS + i].ptr);
	set_state(t, i, OWN_EMPTY);
}

OPS static void op_realloc(int t, int i, size_t n)
{
	void *p;

	SET(t, i, newsize, n);
	set_state(t, i, OWN_REALLOC);
	p = realloc((void *)(uintptr_t)P->own[t * OWN_SLOTS + i].ptr, n);
	if (!p) {
		set_state(t, i, OWN_HELD);
		return;
	}
	SET(t, i, newptr, (uintptr_t)p);
	SET(t, i, newsampled, (uint32_t)sampled(p));
	set_state(t, i, OWN_REALLOC_DONE);
	SET(t, i, ptr, (uintptr_t)p);
	SET(t, i, size, n);
	SET(t, i, sampled, (uint32_t)sampled(p));
	set_state(t, i, OWN_HELD);
}

/* The list's file and its private copy, for @nthreads + 1 threads. */
static void list_open(int nthreads)
{
	int fd = open(list_path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	list_len = sizeof(struct ownlist) + (size_t)OWN_SLOTS * (nthreads + 1) * sizeof(struct own);
	if (fd < 0 || ftruncate(fd, (off_t)list_len)) {
		perror("prog_death: list");
		exit(2);
	}
	L = mmap(NULL, list_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	P = mmap(NULL, list_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	close(fd);
	if (L == MAP_FAILED || P == MAP_FAILED) {
		perror("prog_death: list");
		exit(2);
	}
	P->magic = OWN_MAGIC;
	P->pid = getpid();
	P->nthreads = (uint32_t)nthreads + 1;
	P->ops_start = (uintptr_t)__start_hsops;
	P->ops_end = (uintptr_t)__stop_hsops;
	memcpy(L, P, sizeof(*L));
}

/* In a forked child: its list, LIST.PID, as the fork left the private copy. */
static void list_fork(void)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s.%d", list_path, (int)getpid());
	P->pid = getpid();
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pwrite(fd, P, list_len, 0) != (ssize_t)list_len ||
	    mmap(L, list_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		perror("prog_death: child list");
		_exit(2);
	}
	close(fd);
}

/* A fixed mix on thread 0's slots: 300 blocks, a third freed, a third realloc'ed. */
static void mix(void)
{
	for (int i = 0; i < 300; i++)
		op_alloc(0, i, 16 + (7919u + (unsigned)i * 104729u) % 5000);
	for (int i = 0; i < 300; i += 3)
		op_free(0, i);
	for (int i = 1; i < 300; i += 3)
		op_realloc(0, i, 100 + (unsigned)i * 37 % 9000);
}

/*
 * Thread 0's block @i allocated from a call path of its own: @level
 * levels, each one of two call sites by the next bit of @bits.
 */
static __attribute__((noinline)) void path_alloc(int level, unsigned int bits, int i)
{
	if (!level) {
		op_alloc(0, i, 16 + (size_t)i % 64);
		return;
	}
	if (bits & 1) {
		path_alloc(level - 1, bits >> 1, i);
		__asm__ volatile("nop" ::: "memory");
	} else {
		path_alloc(level - 1, bits >> 1, i);
		__asm__ volatile("nop; nop" ::: "memory");
	}
}

static long done[65];
static volatile int stop_all;
static int pause_req, parked, running;

/* Between two calls, a thread rests while the main thread forks. */
static void maybe_park(void)
{
	if (!__atomic_load_n(&pause_req, __ATOMIC_ACQUIRE))
		return;
	__atomic_fetch_add(&parked, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&pause_req, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_fetch_sub(&parked, 1, __ATOMIC_ACQ_REL);
}

static void *churn(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);

	__atomic_fetch_add(&running, 1, __ATOMIC_ACQ_REL);
	for (long n = 0; !stop_all; n++) {
		int i;

		maybe_park();
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = (int)(x % OWN_SLOTS);
		if (state_of(t, i) == OWN_EMPTY)
			op_alloc(t, i, 8 + x % 2000);
		else if (x & 0x100000)
			op_realloc(t, i, 8 + (x >> 20) % 4000);
		else
			op_free(t, i);
		__atomic_store_n(&done[t], n, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *one_block(void *arg)
{
	int i = (int)(intptr_t)arg;

	op_alloc(0, 300 + i % 700, 100);
	op_free(0, 300 + i % 700);
	return NULL;
}

static void ready(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
}

static sigjmp_buf again;
static int recovered;

static void recover(int sig)
{
	(void)sig;
	if (!recovered++)
		siglongjmp(again, 1);
	signal(SIGSEGV, SIG_DFL);	/* the second time: give up, as a crash handler does */
}

static int deep(int n)
{
	volatile char pad[4096];

	pad[0] = (char)n;
	return deep(n + 1) + pad[0];
}

/*
 * A hello with a wrong token (and no table) to heapsnoop's socket; with
 * @old, one of version 2 (its size, no descriptors) with the right token.
 */
static void bad_hello(bool old)
{
	const char *name = getenv("HEAPSNOOP_SOCK"), *tok = getenv("HEAPSNOOP_TOKEN");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct lt_hello h = { .magic = LT_HELLO_MAGIC, .version = old ? 2 : LT_VERSION,
			      .kind = LT_HELLO_IMAGE, .pid = getpid(), .token = "not the token" };
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);

	if (!name || s < 0)
		return;
	if (old && tok)
		snprintf(h.token, sizeof(h.token), "%s", tok);
	memcpy(a.sun_path + 1, name, strlen(name));
	sendto(s, &h, old ? offsetof(struct lt_hello, nsegs) : sizeof(h), 0, (struct sockaddr *)&a,
	       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name)));
	close(s);
}

static void threads_case(const char *c, int n, int k)
{
	pthread_t th[64];

	for (int t = 1; t <= n && t <= 64; t++)
		pthread_create(&th[t - 1], NULL, churn, (void *)(intptr_t)t);
	for (int t = 1; t <= n; t++)
		while (__atomic_load_n(&done[t], __ATOMIC_RELAXED) < 20000)
			sched_yield();
	if (!strcmp(c, "threads-exit"))
		_exit(0);
	if (!strcmp(c, "threads-fork")) {
		pid_t p;

		__atomic_store_n(&pause_req, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&parked, __ATOMIC_ACQUIRE) < __atomic_load_n(&running, __ATOMIC_ACQUIRE))
			sched_yield();
		p = fork();
		if (p == 0) {
			list_fork();
			_exit(0);
		}
		__atomic_store_n(&pause_req, 0, __ATOMIC_RELEASE);
		waitpid(p, NULL, 0);
	}
	if (!strcmp(c, "threads-forkcow")) {
		for (int j = 0; j < k; j++) {
			pid_t p = fork();

			if (p == 0) {
				list_fork();
				for (int i = 0; i < 300; i += 7)
					if (state_of(0, i) == OWN_HELD)
						op_free(0, i);
				for (int i = 300; i < 310; i++)
					op_alloc(0, i, 222);
				_exit(0);
			}
			waitpid(p, NULL, 0);
		}
	}
	if (!strcmp(c, "threads-sig")) {
		sigset_t fatal;

		sigemptyset(&fatal);
		sigaddset(&fatal, SIGSEGV);
		sigaddset(&fatal, SIGABRT);
		sigaddset(&fatal, SIGBUS);
		sigaddset(&fatal, SIGFPE);
		pthread_sigmask(SIG_BLOCK, &fatal, NULL);
	}
	ready();
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const char *c = argc > 2 ? argv[2] : "";
	int n = argc > 3 ? atoi(argv[3]) : 4, k = argc > 4 ? atoi(argv[4]) : 10;

	if (argc < 3)
		return 2;
	snprintf(list_path, sizeof(list_path), "%s", argv[1]);
	list_open(!strncmp(c, "threads", 7) ? n : 0);
	if (!strncmp(c, "threads", 7)) {
		mix();
		threads_case(c, n, k);
	}
	mix();
	if (!strcmp(c, "exit") || !strcmp(c, "stopmix"))
		exit(0);
	if (!strcmp(c, "_exit"))
		_exit(0);
	if (!strcmp(c, "_Exit"))
		_Exit(0);
	if (!strcmp(c, "quick_exit"))
		quick_exit(0);
	if (!strcmp(c, "abort"))
		abort();
	if (!strcmp(c, "segv"))
		*(volatile int *)(uintptr_t)8 = 1;
	if (!strcmp(c, "bus")) {
		/* Past the end of a file mapped: the page has no backing. */
		FILE *f = tmpfile();
		volatile char *m = f ? mmap(NULL, 8192, PROT_READ, MAP_SHARED, fileno(f), 0) : NULL;

		if (m && m != MAP_FAILED)
			return m[4096];
	}
	if (!strcmp(c, "fpe")) {
#if defined(__x86_64__)
		volatile int zero = 0, seven = 7;	/* GCC turns 1 / x into compares */

		return seven / zero;
#else
		raise(SIGFPE);	/* arm64 divides by zero without a trap */
#endif
	}
	if (!strcmp(c, "overflow"))
		return deep(0);
	if (!strcmp(c, "kill")) {
		ready();
		for (;;)
			pause();
	}
	if (!strcmp(c, "sigchain")) {
		signal(SIGSEGV, recover);
		if (!sigsetjmp(again, 1))
			*(volatile int *)(uintptr_t)8 = 1;
		for (int i = 300; i < 310; i++)
			op_alloc(0, i, 777);
		*(volatile int *)(uintptr_t)8 = 1;
	}
	if (!strcmp(c, "forkpaths"))
		for (int i = 400; i < 1000; i++)
			path_alloc(12, (unsigned int)i, i);
	if (!strcmp(c, "fork") || !strcmp(c, "forkstop") || !strcmp(c, "forkpaths")) {
		pid_t p;

		fflush(stdout);
		p = fork();
		if (p == 0) {
			list_fork();
			for (int i = 2; i < 300; i += 3)
				if (state_of(0, i) == OWN_HELD)
					op_free(0, i);
			for (int i = 300; i < 320; i++)
				op_alloc(0, i, 222);
			_exit(0);
		}
		waitpid(p, NULL, 0);
		for (int i = 320; i < 330; i++)
			op_alloc(0, i, 333);
		exit(0);
	}
	if (!strcmp(c, "storm")) {
		for (int i = 0; i < n; i++) {
			pthread_t th;

			if (pthread_create(&th, NULL, one_block, (void *)(intptr_t)i) ||
			    pthread_join(th, NULL))
				return 2;
		}
		exit(0);
	}
	if (!strcmp(c, "forklate")) {
		pid_t p;

		fflush(stdout);
		p = fork();
		if (p == 0) {
			for (int i = 0; i < 30000; i++)
				if (!malloc(16))
					_exit(2);
			_exit(0);
		}
		waitpid(p, NULL, 0);
		for (int j = 0; j < 3; j++) {
			p = fork();
			if (p == 0) {
				list_fork();
				op_alloc(0, 300 + j, 4444);
				_exit(0);
			}
			waitpid(p, NULL, 0);
		}
		ready();
		_exit(0);
	}
	if (!strcmp(c, "badhello") || !strcmp(c, "badversion")) {
		bad_hello(!strcmp(c, "badversion"));
		exit(0);
	}
	fprintf(stderr, "prog_death: unknown case %s\n", c);
	return 2;
}

// SPDX-License-Identifier: MIT
/*
 * prog_slotexit.c - threads that end inside an allocator call
 * (libexitcall.so's malloc), for test_threads.sh under --thread-slots 1:
 *  1. thread die_owner ends inside malloc while its call holds the slot;
 *  2. thread hold_slot's malloc waits inside the call, holding the slot,
 *     while thread die_spilled's call (its state in the calls map: the
 *     slot is held) ends its thread; then hold_slot's call returns and its
 *     block is freed;
 *  3. main: 200 x malloc(100) + free, then 3 x malloc(48) in leak(), kept.
 * Each step waits for the last (joins, a pipe, a dead thread's going):
 * no sleeps.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libexitcall.h"

void *volatile keep[3];

/* The thread that ends inside its call, by its thread id. */
static volatile pid_t dying;

static void *die_owner(void *arg)
{
	dying = syscall(SYS_gettid);
	return malloc(EXITCALL_DIE);
}

static void *die_spilled(void *arg)
{
	dying = syscall(SYS_gettid);
	return malloc(EXITCALL_DIE);
}

/*
 * pthread_join() returns once the kernel clears the thread's id in its
 * exit (mm_release(), in exit_mm()), before sched_process_exit, where
 * heapsnoop frees the dead thread's slot: the next call could find the
 * slot still held. The thread is gone from /proc/self/task only once it
 * is released, after that tracepoint: wait for that.
 */
static void join_dead(pthread_t t)
{
	char path[64];
	struct stat st;

	pthread_join(t, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)dying);
	while (stat(path, &st) == 0)
		sched_yield();
	if (errno != ENOENT) {
		perror(path);
		exit(1);
	}
}

/* Kept in a volatile: a compiler drops a malloc freed unused. */
static void *volatile block;

static void *hold_slot(void *arg)
{
	block = malloc(EXITCALL_HOLD);
	free(block);
	return NULL;
}

__attribute__((noinline)) static void churn(void)
{
	for (int i = 0; i < 200; i++) {
		block = malloc(100);
		free(block);
	}
}

__attribute__((noinline)) static void leak(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc(48);
}

static void run(void *(*fn)(void *), pthread_t *t)
{
	if (pthread_create(t, NULL, fn, NULL)) {
		perror("pthread_create");
		exit(1);
	}
}

int main(void)
{
	int inside[2], release[2];
	pthread_t t, holder;
	char c = 0;

	run(die_owner, &t);
	join_dead(t);
	if (pipe(inside) || pipe(release))
		return 1;
	exitcall_inside_fd = inside[1];
	exitcall_release_fd = release[0];
	run(hold_slot, &holder);
	if (read(inside[0], &c, 1) != 1)
		return 1;
	run(die_spilled, &t);
	join_dead(t);
	if (write(release[1], &c, 1) != 1)
		return 1;
	pthread_join(holder, NULL);
	churn();
	leak();
	printf("done\n");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * prog_creator.c - threads with known creators (test_creator.sh): main ->
 * spawn_pool() makes 4 workers, each leaking 100 bytes from
 * worker_main() -> worker_loop() -> leak_here(); main -> spawn_parent()
 * makes one thread that makes another, parent_main() -> spawn_child(),
 * whose child_main() -> child_leak() leaks 300 bytes: two creators deep.
 * Every thread joined, it exits with the leaks live. With an argument
 * ("wait"), it says "ready PID" first and reads a line from stdin before
 * making any thread (-p attaches meanwhile); with "fail", it first asks
 * for a thread whose stack cannot be had and says "create failed: ERRNO"
 * (pthread_create's error, as the C library returned it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS 4

static void *volatile sink[WORKERS + 1];

__attribute__((noinline)) static void leak_here(long i)
{
	sink[i] = malloc(100);
}

__attribute__((noinline)) static void worker_loop(long i)
{
	leak_here(i);
}

static void *worker_main(void *arg)
{
	worker_loop((long)arg);
	return NULL;
}

__attribute__((noinline)) static int spawn_pool(pthread_t *t)
{
	for (long i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker_main, (void *)i))
			return -1;
	return 0;
}

__attribute__((noinline)) static void child_leak(void)
{
	sink[WORKERS] = malloc(300);
}

static void *child_main(void *arg)
{
	(void)arg;
	child_leak();
	return NULL;
}

__attribute__((noinline)) static int spawn_child(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, child_main, NULL))
		return -1;
	return pthread_join(t, NULL);
}

static void *parent_main(void *arg)
{
	(void)arg;
	return (void *)(long)spawn_child();
}

__attribute__((noinline)) static int spawn_parent(pthread_t *t)
{
	return pthread_create(t, NULL, parent_main, NULL);
}

int main(int argc, char **argv)
{
	pthread_t t[WORKERS], p;
	char line[16];

	if (argc > 1 && !strcmp(argv[1], "wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "fail")) {
		pthread_attr_t a;
		int err;

		/* 2^62 bytes of stack: no mmap gives it, pthread_create says EAGAIN. */
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, (size_t)1 << 62);
		err = pthread_create(&p, &a, worker_main, (void *)0);
		pthread_attr_destroy(&a);
		printf("create failed: %d\n", err);
		if (!err)
			return 1;
	}
	if (spawn_pool(t) || spawn_parent(&p))
		return 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	pthread_join(p, NULL);
	return 0;
}

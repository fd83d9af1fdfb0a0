// SPDX-License-Identifier: MIT
/*
 * prog_creatorends.c - the ways a thread with a creator ends, under the
 * collector (test_preload_creator.sh): made by main, one leaks 11 bytes
 * (exiter_leak) and ends by pthread_exit, its thread-specific value's
 * destructor then leaking 55 (dtor: after its start routine, no
 * creator); one leaks 22 (cancel_leak) and is cancelled; one forks, its
 * child leaking 33 (forked_leak: the child's one thread is a copy of
 * the forking one, its creator with it) and exiting; main leaks 44
 * (main_leak: no creator). Says "done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile keep[8];
static pthread_key_t key;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int leaked;

static void dtor(void *p)
{
	keep[5] = malloc(55);
	free(p);
}

__attribute__((noinline)) static void exiter_leak(void)
{
	keep[0] = malloc(11);
}

static void *exiter(void *arg)
{
	pthread_setspecific(key, malloc(7));
	exiter_leak();
	pthread_exit(arg);
}

__attribute__((noinline)) static void cancel_leak(void)
{
	keep[1] = malloc(22);
}

static void *canceled(void *arg)
{
	cancel_leak();
	pthread_mutex_lock(&lock);
	leaked = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	for (;;)
		pause();	/* a cancellation point */
	return arg;
}

__attribute__((noinline)) static void forked_leak(void)
{
	keep[2] = malloc(33);
}

static void *forker(void *arg)
{
	pid_t p = fork();

	if (!p) {
		forked_leak();
		exit(0);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
	return arg;
}

__attribute__((noinline)) static void main_leak(void)
{
	keep[3] = malloc(44);
}

int main(void)
{
	pthread_t t;

	pthread_key_create(&key, dtor);
	if (pthread_create(&t, NULL, exiter, NULL) || pthread_join(t, NULL))
		return 1;
	if (pthread_create(&t, NULL, canceled, NULL))
		return 1;
	pthread_mutex_lock(&lock);
	while (!leaked)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	if (pthread_cancel(t) || pthread_join(t, NULL))
		return 1;
	if (pthread_create(&t, NULL, forker, NULL) || pthread_join(t, NULL))
		return 1;
	main_leak();
	puts("done");
	return 0;
}

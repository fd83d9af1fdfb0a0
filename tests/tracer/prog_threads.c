// SPDX-License-Identifier: MIT
/*
 * prog_threads.c - 4 threads each allocate 1000 blocks of (t+1)*16 bytes;
 * after a barrier each frees the even-numbered blocks of its neighbour
 * (frees from another thread than the allocating one). Live at exit:
 * 2000 blocks, 500*16*(1+2+3+4) = 80000 bytes, all from thread_alloc.
 */
#include <pthread.h>
#include <stdlib.h>

#define NTHREADS 4
#define NBLOCKS 1000

static void *blocks[NTHREADS][NBLOCKS];
static pthread_barrier_t barrier;

__attribute__((noinline)) static void *thread_alloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	return p;
}

__attribute__((noinline)) static void *thread_main(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < NBLOCKS; i++)
		blocks[t][i] = thread_alloc((size_t)(t + 1) * 16);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < NBLOCKS; i += 2)
		free(blocks[(t + 1) % NTHREADS][i]);
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (long t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, thread_main, (void *)t))
			return 1;
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	return 0;
}

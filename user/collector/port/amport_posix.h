/* SPDX-License-Identifier: MIT */
/*
 * amport_posix.h - the alloc-metadata core's hooks on Linux and any POSIX
 * system (port/amport.h): a pthread mutex, the struct from calloc,
 * sampling by bytes (sampling.c).
 */
#ifndef HEAPSNOOP_AMPORT_POSIX_H
#define HEAPSNOOP_AMPORT_POSIX_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "sampling.h"

#define AM_PORT_SAMPLING 1

typedef pthread_mutex_t am_lock_t;

static inline void am_lock_init(am_lock_t *l)
{
	pthread_mutex_init(l, NULL);
}

static inline void am_lock_destroy(am_lock_t *l)
{
	pthread_mutex_destroy(l);
}

static inline void am_lock_take(am_lock_t *l)
{
	pthread_mutex_lock(l);
}

static inline void am_lock_give(am_lock_t *l)
{
	pthread_mutex_unlock(l);
}

static inline void *am_port_zalloc(size_t size)
{
	return calloc(1, size);
}

static inline void am_port_release(void *p)
{
	free(p);
}

static inline uint64_t am_port_estimate(uint64_t size, uint64_t mean)
{
	return sample_estimate(size, mean);
}

#endif /* HEAPSNOOP_AMPORT_POSIX_H */

/* SPDX-License-Identifier: MIT */
/*
 * amport_cortexm.h - the alloc-metadata core's hooks on a bare Cortex-M
 * (ARMv7-M, one core, no operating system; port/amport.h): the lock masks
 * interrupts (PRIMASK, saved and put back, so it nests in a handler that
 * already masked them), and the lists' structs come from a static array of
 * HS_AM_PORT_LISTS (default 1), never from a heap; no sampling by bytes
 * (its estimate is floating point, 10 KB of soft-float code on a
 * Cortex-M3, and a pool's every block has its record anyway:
 * hs_am__set_sample_bytes() does nothing). Mutual exclusion on one
 * core: a handler that allocates cannot run while thread code holds the
 * list. Not for an RTOS with several cores (its own mutex port then).
 */
#ifndef HEAPSNOOP_AMPORT_CORTEXM_H
#define HEAPSNOOP_AMPORT_CORTEXM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef HS_AM_PORT_LISTS
#define HS_AM_PORT_LISTS 1
#endif

typedef struct {
	uint32_t primask;	/* PRIMASK before am_lock_take() */
} am_lock_t;

static inline void am_lock_init(am_lock_t *l)
{
	l->primask = 0;
}

static inline void am_lock_destroy(am_lock_t *l)
{
	(void)l;
}

static inline void am_lock_take(am_lock_t *l)
{
	uint32_t m;

	__asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(m) : : "memory");
	l->primask = m;
}

static inline void am_lock_give(am_lock_t *l)
{
	__asm__ volatile("msr primask, %0" : : "r"(l->primask) : "memory");
}

/* The lists' structs (struct hs_am), in each file that includes the port: only alloc_metadata.c allocates. */
static uint64_t am_port_slots[HS_AM_PORT_LISTS][64] __attribute__((unused));	/* < 512 bytes */
static uint8_t am_port_used[HS_AM_PORT_LISTS] __attribute__((unused));

static inline void *am_port_zalloc(size_t size)
{
	if (size > sizeof(am_port_slots[0]))
		return NULL;
	for (int i = 0; i < HS_AM_PORT_LISTS; i++) {
		if (!am_port_used[i]) {
			am_port_used[i] = 1;
			memset(am_port_slots[i], 0, size);
			return am_port_slots[i];
		}
	}
	return NULL;
}

static inline void am_port_release(void *p)
{
	for (int i = 0; i < HS_AM_PORT_LISTS; i++)
		if (p == am_port_slots[i])
			am_port_used[i] = 0;
}

#define AM_PORT_SAMPLING 0

static inline uint64_t am_port_estimate(uint64_t size, uint64_t mean)
{
	(void)mean;
	return size;
}

#endif /* HEAPSNOOP_AMPORT_CORTEXM_H */

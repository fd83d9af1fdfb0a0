// SPDX-License-Identifier: MIT
/*
 * prog_jemalloc.c - a program linked with jemalloc that allocates through
 * its own entry points, none of which goes through its malloc:
 *   new_leak()      3 x operator new(48), kept
 *   new_freed()     operator new(64), operator delete
 *   mallocx_leak()  2 x mallocx(100), kept
 *   rallocx_leak()  mallocx(10), rallocx to 5000, kept
 *   xallocx_leak()  mallocx(4000), xallocx to 4096 (in place: the same
 *                   size class), then xallocx to 1 MiB (fails), kept
 *   dallocx_freed() mallocx(77), dallocx; and sdallocx of a mallocx(88)
 *   malloc_leak()   malloc(33), kept
 * The C++ operators are called by their Itanium names from C.
 */
#include <stddef.h>
#include <stdlib.h>

void *_Znwm(size_t size);			/* operator new(size_t) */
void _ZdlPv(void *p);				/* operator delete(void *) */
void *mallocx(size_t size, int flags);
void *rallocx(void *p, size_t size, int flags);
size_t xallocx(void *p, size_t size, size_t extra, int flags);
void dallocx(void *p, int flags);
void sdallocx(void *p, size_t size, int flags);

void *volatile keep[8];	/* not static: the leaks are not optimized away */

__attribute__((noinline)) static void new_leak(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = _Znwm(48);
}

__attribute__((noinline)) static void new_freed(void)
{
	_ZdlPv(_Znwm(64));
}

__attribute__((noinline)) static void mallocx_leak(void)
{
	keep[3] = mallocx(100, 0);
	keep[4] = mallocx(100, 0);
}

__attribute__((noinline)) static void rallocx_leak(void)
{
	keep[5] = rallocx(mallocx(10, 0), 5000, 0);
}

__attribute__((noinline)) static void xallocx_leak(void)
{
	keep[7] = mallocx(4000, 0);
	if (xallocx(keep[7], 4096, 0, 0) < 4096)
		abort();
	if (xallocx(keep[7], 1 << 20, 0, 0) >= 1 << 20)
		abort();
}

__attribute__((noinline)) static void dallocx_freed(void)
{
	dallocx(mallocx(77, 0), 0);
	sdallocx(mallocx(88, 0), 88, 0);
}

__attribute__((noinline)) static void malloc_leak(void)
{
	keep[6] = malloc(33);
}

int main(void)
{
	new_leak();
	new_freed();
	mallocx_leak();
	rallocx_leak();
	xallocx_leak();
	dallocx_freed();
	malloc_leak();
	return 0;
}

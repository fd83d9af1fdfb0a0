// SPDX-License-Identifier: MIT
/*
 * prog_semantics.c - one function per allocator rule heapsnoop must get
 * right; each leaks a known size from a uniquely named function (or must
 * leave nothing). Writes nothing to stdout: no stdio buffer in the way.
 * Expected results: test_semantics.sh.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile sink[64];
static int n;

static void keep(void *p)
{
	sink[n++ & 63] = p;
}

NOINLINE void case_malloc_leak(void)
{
	for (int i = 0; i < 3; i++)
		keep(malloc(100));
}

NOINLINE void case_freed(void)
{
	for (int i = 0; i < 5; i++) {
		void *p = malloc(77);

		keep(p);
		free(p);
	}
}

NOINLINE void case_realloc_null(void)
{
	keep(realloc(NULL, 111));
}

NOINLINE void *src_realloc_zero(void)
{
	return malloc(222);
}

NOINLINE void case_realloc_zero(void)
{
	void *p = src_realloc_zero();

	keep(realloc(p, 0)); /* frees p, returns NULL */
}

NOINLINE void *src_realloc_fail(void)
{
	return malloc(333);
}

NOINLINE void case_realloc_fail(void)
{
	void *p = src_realloc_fail();
	void *volatile huge = (void *)(SIZE_MAX / 2);

	keep(p);
	keep(realloc(p, (size_t)huge)); /* fails: p stays live */
}

NOINLINE void *src_realloc_grow(void)
{
	return malloc(10);
}

NOINLINE void case_realloc_grow(void)
{
	keep(realloc(src_realloc_grow(), 5000));
}

NOINLINE void case_calloc(void)
{
	keep(calloc(7, 9));
}

NOINLINE void case_calloc_overflow(void)
{
	volatile size_t big = SIZE_MAX / 2;

	keep(calloc(big, 4)); /* NULL: nothing live */
}

NOINLINE void case_malloc_fail(void)
{
	volatile size_t big = SIZE_MAX - 4096;

	keep(malloc(big));
}

NOINLINE void case_posix_memalign(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 444) == 0)
		keep(p);
}

NOINLINE void case_posix_memalign_fail(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 3, 444) == 0) /* EINVAL: not a power of two */
		keep(p);
}

NOINLINE void case_aligned_alloc(void)
{
	keep(aligned_alloc(64, 512));
}

NOINLINE void case_memalign(void)
{
	keep(memalign(32, 96));
}

NOINLINE void case_valloc(void)
{
	keep(valloc(123));
}

NOINLINE void case_pvalloc(void)
{
	keep(pvalloc(321));
}

NOINLINE void case_reallocarray(void)
{
	keep(reallocarray(NULL, 10, 20));
}

NOINLINE void *src_reallocarray_fail(void)
{
	return malloc(55);
}

NOINLINE void case_reallocarray_fail(void)
{
	void *p = src_reallocarray_fail();
	volatile size_t big = SIZE_MAX / 2;

	keep(p);
	keep(reallocarray(p, big, 4)); /* overflow: NULL, p stays live */
}

NOINLINE void case_free_null(void)
{
	free(NULL);
}

int main(void)
{
	case_malloc_leak();
	case_freed();
	case_realloc_null();
	case_realloc_zero();
	case_realloc_fail();
	case_realloc_grow();
	case_calloc();
	case_calloc_overflow();
	case_malloc_fail();
	case_posix_memalign();
	case_posix_memalign_fail();
	case_aligned_alloc();
	case_memalign();
	case_valloc();
	case_pvalloc();
	case_reallocarray();
	case_reallocarray_fail();
	case_free_null();
	return 0;
}

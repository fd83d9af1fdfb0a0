// SPDX-License-Identifier: MIT
/*
 * pydecode_arm64.c - pydecode.h on arm64: not written yet (no arm64
 * CPython was at hand to learn its shapes from), so a Python process there
 * is said to have no frames read (user/interp/python/pyfind.c).
 */
#include <errno.h>

#include "interp/python/pydecode.h"

int pydecode__tss_key(const uint8_t *code, size_t len, uint64_t addr, struct pydecode_key *key)
{
	(void)code; (void)len; (void)addr; (void)key;
	return -ENOTSUP;
}

int pydecode__jumps_out(const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx)
{
	(void)code; (void)len; (void)addr; (void)fn; (void)ctx;
	return -ENOTSUP;
}

int pydecode__malloc_hook(const uint8_t *code, size_t len, uint64_t addr, uint64_t *hook,
			  uint64_t *pymalloc)
{
	(void)code; (void)len; (void)addr; (void)hook; (void)pymalloc;
	return -ENOTSUP;
}

// SPDX-License-Identifier: MIT
/*
 * dlclose.c - the collector's dlclose(): how the unwinder's rule cache
 * (localstack.c) learns that a module's addresses may hold other code
 * from now on. A program unloads modules by dlclose (dlclose(3)); this one
 * interposes the C library's as the preload's malloc does its allocator
 * (the preload comes first in every lookup scope), and moves the cache's
 * epoch before the module goes (no rule kept for it is used for what may
 * be mapped there next, by another thread, as soon as the loader's lock
 * is free) and after (localstack__unloaded()). heaptrack's preload does
 * the same for libunwind's cache (its dlclose hook, unw_flush_cache).
 *
 * glibc also unloads by itself, without this symbol (iconv's gconv
 * modules, through __libc_dlclose): the walk finds those at its next rule
 * parsed, by the loader's count of unloads (localstack.c).
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include "localstack.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int dlclose(void *handle)
{
	static int (*_Atomic real)(void *);
	int (*fn)(void *) = atomic_load_explicit(&real, memory_order_relaxed);
	int err;

	/* The C library's, found once; dlsym may allocate, the preload's malloc copes. */
	if (!fn) {
		fn = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!fn)
			return -1;	/* cannot happen: the program that calls dlclose links it */
		atomic_store_explicit(&real, fn, memory_order_relaxed);
	}
	localstack__unloading();
	err = fn(handle);
	localstack__unloaded();
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * nodlopen.c - dlopen() refused, in the static release binaries.
 *
 * heapsnoop and heapdecode are linked static (Makefile, STATIC=1) with
 * -Wl,--wrap=dlopen, which sends every call to dlopen() in the objects
 * linked (libdw's libdwfl is the only caller: it dlopens libdebuginfod.so
 * when DEBUGINFOD_URLS is set) here instead. A static program that
 * dlopens loads a second, shared C library beside its own, one of the
 * machine's version and not the one linked in: glibc warns at link time
 * ("Using 'dlopen' in statically linked applications requires at runtime
 * the shared libraries from the glibc version used for linking"), and
 * on another distribution it fails or corrupts. libdwfl treats NULL as
 * "no debuginfod client" and goes on without it; the symbolizer asks
 * debuginfod through elfutils' own client program instead
 * (debuginfod.c).
 *
 * Linked into the dynamic builds too (STATIC=0, ASan), where nothing is
 * wrapped and nothing calls it.
 */
#include <dlfcn.h>
#include <stddef.h>

void *__wrap_dlopen(const char *file, int mode);

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}

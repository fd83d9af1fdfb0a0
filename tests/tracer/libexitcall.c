// SPDX-License-Identifier: MIT
/*
 * libexitcall.c - an "allocator" library (glibc's malloc underneath) whose
 * calls can be made to end or hold their thread inside them, for
 * test_threads.sh (prog_slotexit):
 *   malloc(EXITCALL_DIE)   the thread ends inside the call (SYS_exit: that
 *                          thread only); the call never returns
 *   malloc(EXITCALL_HOLD)  writes a byte to exitcall_inside_fd, then waits
 *                          for one on exitcall_release_fd, then allocates
 */
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libexitcall.h"

void *__libc_malloc(size_t size);
void __libc_free(void *p);

int exitcall_inside_fd = -1, exitcall_release_fd = -1;

void *malloc(size_t size)
{
	char c = 0;

	if (size == EXITCALL_DIE)
		syscall(SYS_exit, 0);
	if (size == EXITCALL_HOLD &&
	    (write(exitcall_inside_fd, &c, 1) != 1 || read(exitcall_release_fd, &c, 1) != 1))
		return NULL;
	return __libc_malloc(size);
}

void free(void *p)
{
	__libc_free(p);
}

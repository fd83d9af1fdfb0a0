/* SPDX-License-Identifier: MIT */
/*
 * libctsd.h - where a thread's pthread_getspecific() data lies, from its
 * thread pointer, in the C library a process maps: glibc's struct
 * pthread, as glibc describes it to debuggers (the _thread_db_*
 * descriptors libthread_db reads, exported GLIBC_PRIVATE by libc.so.6
 * since 2.34 and by libpthread.so.0 before): specific[] (the second
 * level's blocks) and, just before it, specific_1stblock[] (keys 0 to
 * 31), each entry a struct pthread_key_data { seq; data }. What BPF reads
 * a CPython thread's state through (user/interp/python/python.bpf.h). musl keeps no such
 * descriptors: not supported (said).
 */
#ifndef HEAPSNOOP_LIBCTSD_H
#define HEAPSNOOP_LIBCTSD_H

#include <stdint.h>

struct libc_tsd {
	int64_t first;		/* thread pointer -> specific_1stblock[0] */
	int64_t second;		/* thread pointer -> specific[0] */
	uint32_t entry;		/* sizeof(struct pthread_key_data) */
	uint32_t data;		/* its data pointer's offset */
};

/*
 * The layout of the C library at @path (or of its libpthread: the one
 * that has the descriptors) into @t. Returns 0, -ENOENT (no glibc
 * descriptors: not glibc, or one that strips them), -EINVAL (they do not
 * describe the layout above), -errno.
 */
int libc_tsd__read(const char *path, struct libc_tsd *t);

#endif /* HEAPSNOOP_LIBCTSD_H */

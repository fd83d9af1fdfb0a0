// SPDX-License-Identifier: MIT
/*
 * libctsd.c - glibc's thread-specific data, from its _thread_db_*
 * descriptors (see libctsd.h). Each descriptor of a field is three
 * uint32_t: its size in bits (of one element for an array), its count,
 * its offset (glibc's nptl_db/structs.def, db-symbols.awk).
 */
#include <errno.h>
#include <stdint.h>

#include "maps/elffile.h"
#include "heapsnoop/arch.h"
#include "interp/python/libctsd.h"

/* PTHREAD_KEY_2NDLEVEL_SIZE: keys a block holds, the first block's too. */
#define KEYS_PER_BLOCK 32

static int desc(struct elf_file *ef, const char *name, uint32_t *v, size_t n)
{
	struct elf_func obj;

	if (elf_file__find_object(ef, name, &obj))
		return -ENOENT;
	return elf_file__read_addr(ef, obj.addr, v, n * sizeof(*v));
}

int libc_tsd__read(const char *path, struct libc_tsd *t)
{
	uint32_t specific[3], data[3], level2[3], entry, self = 0;
	struct elf_file *ef;
	int err = elf_file__open(path, &ef);

	if (err)
		return err;
	err = desc(ef, "_thread_db_pthread_specific", specific, 3);
	if (!err)
		err = desc(ef, "_thread_db_pthread_key_data_data", data, 3);
	if (!err)
		err = desc(ef, "_thread_db_pthread_key_data_level2_data", level2, 3);
	if (!err)
		err = desc(ef, "_thread_db_sizeof_pthread_key_data", &entry, 1);
#ifdef HS_ARCH_ARM64
	/* The thread pointer is just past struct pthread (TLS_DTV_AT_TP). */
	if (!err)
		err = desc(ef, "_thread_db_sizeof_pthread", &self, 1);
#endif
	elf_file__close(ef);
	if (err)
		return err == -ERANGE ? -EINVAL : err;
	/*
	 * specific[]: pointers (glibc 2.36 describes the array as one field
	 * of 2048 bits); a block: KEYS_PER_BLOCK entries of @entry bytes.
	 */
	if (!specific[0] || (uint64_t)specific[0] * specific[1] % 64 || level2[1] != KEYS_PER_BLOCK ||
	    level2[0] != 8 * entry || data[0] != 64 || data[2] + 8 > entry || entry > 64)
		return -EINVAL;
	t->second = (int64_t)specific[2] - self;
	t->first = t->second - (int64_t)KEYS_PER_BLOCK * entry;
	t->entry = entry;
	t->data = data[2];
	return 0;
}

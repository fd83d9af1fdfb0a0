// SPDX-License-Identifier: MIT
/*
 * localstack.c - in-process stack capture (see localstack.h). The frame
 * pointer walk only follows a chain that climbs the stack by less than
 * 1 MiB a frame, so a caller that used %rbp for data ends it rather than
 * sending it to another mapping.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "localstack.h"

uintptr_t localstack_self_start, localstack_self_end;
bool localstack_fp;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t here = (uintptr_t)arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && here >= s && here < s + ph->p_memsz) {
			localstack_self_start = s;
			localstack_self_end = s + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void localstack__init(bool use_fp)
{
	localstack_fp = use_fp;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)localstack__init);
	/* heaptrack's setting: a per-thread cache of unwind info, no lock. */
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	unw_set_cache_size(unw_local_addr_space, 1024, 0);
}

int localstack__walk_fp(void **out, int max)
{
	uintptr_t *fp = __builtin_frame_address(0);
	int n = 0;

	while (n < max) {
		uintptr_t *next = (uintptr_t *)fp[0];

		out[n++] = (void *)fp[1];
		if (next <= fp || (uintptr_t)next - (uintptr_t)fp > (1u << 20) ||
		    ((uintptr_t)next & 7))
			break;
		fp = next;
	}
	return n;
}

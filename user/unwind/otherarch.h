/* SPDX-License-Identifier: MIT */
/*
 * unwind/otherarch.h - the unwinder of the other architecture (arm64's
 * in an x86-64 build, x86-64's in an arm64 one), for heapdecode's offline
 * unwinding of a log recorded on the other (input/ustacks.c): the same
 * unwind.c, cfi.c and register tables, compiled a second time for that
 * architecture's registers (otherarch.c), behind this interface, which
 * holds nothing of either.
 */
#ifndef HEAPSNOOP_OTHERARCH_H
#define HEAPSNOOP_OTHERARCH_H

#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"

/* Its name as a `ustack` record's arch= says it, and its registers' count. */
extern const char other_arch_name[];
extern const unsigned int other_arch_nregs;

struct other_unwinder;

/* An unwinder of the other architecture over @src (cfi.h); NULL: no memory. */
struct other_unwinder *other_unwinder__new(const struct cfi_src *src);
void other_unwinder__free(struct other_unwinder *u);

/*
 * Unwind a stack of the other architecture: its registers @regs
 * (other_arch_nregs of them, in its enum hs_ureg's order), its copy
 * (@size bytes at @data, @want, @skip, @holes as a `ustack` record has
 * them), process @pid's mappings from @maps (@ctx its). Frames into
 * @frames (@max at most), UNWIND_* flags into *@flags. Returns the
 * frames' count, -EINVAL for a malformed stack, -ENOMEM.
 */
int other_unwinder__run(struct other_unwinder *u, pid_t pid, unwind_maps_fn maps, void *ctx,
			const uint64_t *regs, uint32_t size, uint32_t want, uint32_t skip,
			uint32_t holes, const uint8_t *data, uint64_t *frames, unsigned int max,
			uint32_t *flags);

#endif /* HEAPSNOOP_OTHERARCH_H */

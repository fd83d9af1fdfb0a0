// SPDX-License-Identifier: MIT
/*
 * otherarch.c - the other architecture's unwinder (see otherarch.h):
 * unwind.c, cfi.c and that architecture's register table, included here
 * and compiled with -D__TARGET_ARCH_<other> (scripts/mk/objects.mk), so
 * heapsnoop/arch.h, cfiregs.h and struct hs_user_stack are that
 * architecture's; their functions renamed so that they sit beside this
 * architecture's own in one program. A return address's mask is the
 * other architecture's fixed one (HS_RA_MASK): this CPU's is not its.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pacmask.h"

#define unwinder__new			other_arch__unwinder_new
#define unwinder__free			other_arch__unwinder_free
#define unwind__run			other_arch__unwind_run
#define unwind__stack_grab		other_arch__unwind_stack_grab
#define unwinder__stats_save		other_arch__unwinder_stats_save
#define unwinder__stats_restore		other_arch__unwinder_stats_restore
#define unwinder__stats			other_arch__unwinder_stats
#define cfi_cache__new			other_arch__cfi_cache_new
#define cfi_cache__free			other_arch__cfi_cache_free
#define cfi_cache__module		other_arch__cfi_cache_module
#define cfi_cache__rule			other_arch__cfi_cache_rule
#define cfi_module__eval_frame		other_arch__cfi_module_eval_frame
#define cfi_cache__stats		other_arch__cfi_cache_stats
#define cfi_cache__trim_due		other_arch__cfi_cache_trim_due
#define cfi_cache__trim			other_arch__cfi_cache_trim
#define cfi_rule_regs			other_arch__cfi_rule_regs
#define arch_ureg_dwarf			other_arch__arch_ureg_dwarf
#define pacmask__detect(from)		((void)(from), HS_RA_MASK)

#include "unwind.c"
#include "cfi.c"
#ifdef HS_ARCH_ARM64
#include "cfiregs_arm64.c"
#else
#include "cfiregs_x86.c"
#endif

#include "unwind/otherarch.h"

const char other_arch_name[] = HS_ARCH_NAME;
const unsigned int other_arch_nregs = HS_UREG__MAX;

struct other_unwinder {
	struct unwinder *u;
};

struct other_unwinder *other_unwinder__new(const struct cfi_src *src)
{
	struct other_unwinder *o = calloc(1, sizeof(*o));

	if (o && !(o->u = unwinder__new(src))) {
		free(o);
		o = NULL;
	}
	return o;
}

void other_unwinder__free(struct other_unwinder *o)
{
	if (!o)
		return;
	unwinder__free(o->u);
	free(o);
}

int other_unwinder__run(struct other_unwinder *o, pid_t pid, unwind_maps_fn maps, void *ctx,
			const uint64_t *regs, uint32_t size, uint32_t want, uint32_t skip,
			uint32_t holes, const uint8_t *data, uint64_t *frames, unsigned int max,
			uint32_t *flags)
{
	size_t len = sizeof(struct hs_user_stack) + size;
	struct hs_user_stack *us = calloc(1, len);
	struct unwind_res rs;

	if (!us)
		return -ENOMEM;
	memcpy(us->regs, regs, sizeof(us->regs));
	us->size = size;
	us->want = want;
	us->skip = skip;
	us->holes = holes;
	memcpy(us->data, data, size);
	unwind__run(o->u, &(struct unwind_req){ .pid = pid, .maps = maps, .ctx = ctx, .us = us,
						.len = len, .frames = frames, .max = max }, &rs);
	free(rs.built);
	free(us);
	*flags = rs.flags;
	return rs.n;
}

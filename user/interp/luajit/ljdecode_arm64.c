// SPDX-License-Identifier: MIT
/*
 * ljdecode_arm64.c - the AArch64 shape of lua_newstate that ljdecode.h
 * reads, a step of interp/insnwalk.h's walk followed with
 * interp/a64track.h: `movz xK, #0x4d50; cmp xR, xK` (an allocf of
 * LJ_ALLOCF_INTERNAL), `adrp xR; add xR, xR, #lo` in a block after the
 * compare's branch (lj_alloc_f into the same register), and `movz x3,
 * #size` before the `blr xR`: the GG_State's size. Shape from Debian
 * 12's libluajit-5.1-2 (2.1.0~beta3+git20220320: 6216 bytes) and Debian
 * 13's luajit (2.1.0+openresty20250117, lua_newstate in the executable:
 * 6280 bytes) for arm64, both GCC.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "interp/a64track.h"
#include "interp/insnwalk.h"
#include "interp/luajit/ljdecode.h"

struct allocf_walk {
	struct a64_regs r;
	uint64_t made[31];	/* the address made into a register (UINT64_MAX: two) */
	int cmp;		/* the register compared with LJ_ALLOCF_INTERNAL, or -1 */
	uint32_t *gg_size;
};

/* Is x@reg LJ_ALLOCF_INTERNAL? */
static bool internal(const struct allocf_walk *w, int reg)
{
	return reg >= 0 && w->r.x[reg].kind == A64_CONST && w->r.x[reg].v == LJ_ALLOCF_INTERNAL;
}

static int allocf_step(void *ctx, const cs_insn *in)
{
	struct allocf_walk *w = ctx;
	const cs_arm64 *a = &in->detail->arm64;
	const struct a64_val *x3 = &w->r.x[3];
	int d;

	/* The GG_State's allocation: nsize (x3) set, then a call through the register. */
	if (in->id == ARM64_INS_BLR && a->op_count == 1 && w->cmp >= 0 &&
	    a64_xreg(a->operands[0].reg) == w->cmp && !*w->gg_size && x3->kind == A64_CONST &&
	    x3->v < UINT32_MAX)
		*w->gg_size = (uint32_t)x3->v;
	if (in->id == ARM64_INS_CMP && a->op_count == 2 && a->operands[0].type == ARM64_OP_REG &&
	    a->operands[1].type == ARM64_OP_REG && a64_width(a->operands[0].reg) == 8) {
		int ra = a64_xreg(a->operands[0].reg), rb = a64_xreg(a->operands[1].reg);

		if (ra >= 0 && internal(w, rb))
			w->cmp = ra;
		else if (rb >= 0 && internal(w, ra))
			w->cmp = rb;
	}
	a64_step(&w->r, in);
	/* An address made into a register (adrp; add): two different ones are no shape. */
	d = a->op_count && a->operands[0].type == ARM64_OP_REG ? a64_xreg(a->operands[0].reg) : -1;
	if (in->id == ARM64_INS_ADD && d >= 0 && w->r.x[d].kind == A64_CONST)
		w->made[d] = !w->made[d] || w->made[d] == w->r.x[d].v ? w->r.x[d].v : UINT64_MAX;
	return INSNWALK_ON;
}

int ljdecode__allocf(const uint8_t *code, size_t len, uint64_t addr, uint64_t *allocf,
		     uint32_t *gg_size)
{
	struct allocf_walk w = { .cmp = -1, .gg_size = gg_size };
	int err;

	*gg_size = 0;
	err = insnwalk(INSNWALK_ARM64, code, len, addr, 0, allocf_step, &w);
	if (err < 0)
		return err;
	if (w.cmp < 0 || !w.made[w.cmp] || w.made[w.cmp] == UINT64_MAX)
		return -ENOENT;
	*allocf = w.made[w.cmp];
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * ljdecode_arm64.c - the AArch64 shape of lua_newstate that ljdecode.h
 * reads (capstone ARM64, followed with interp/a64track.h): `movz xK,
 * #0x4d50; cmp xR, xK` (an allocf of LJ_ALLOCF_INTERNAL), `adrp xR; add
 * xR, xR, #lo` in a block after the compare's branch (lj_alloc_f into the
 * same register), and `movz x3, #size` before the `blr xR`: the
 * GG_State's size. Shape from Debian 12's libluajit-5.1-2
 * (2.1.0~beta3+git20220320: 6216 bytes) and Debian 13's luajit
 * (2.1.0+openresty20250117, lua_newstate in the executable: 6280 bytes)
 * for arm64, both GCC.
 */
#include <errno.h>
#include <stdint.h>

#include "interp/a64track.h"
#include "interp/luajit/ljdecode.h"

int ljdecode__allocf(const uint8_t *code, size_t len, uint64_t addr, uint64_t *allocf,
		     uint32_t *gg_size)
{
	uint64_t made[31] = { 0 };
	struct a64_regs r = { 0 };
	const uint8_t *p = code;
	uint64_t at = addr;
	size_t left = len;
	int cmp = -1, err = -ENOENT;
	cs_insn *in;
	csh h;

	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &h) != CS_ERR_OK)
		return -EINVAL;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	if (!in) {
		cs_close(&h);
		return -ENOMEM;
	}
	*gg_size = 0;
	while (left >= 4) {
		const cs_arm64 *a;
		int d;

		if (!cs_disasm_iter(h, &p, &left, &at, in)) {
			/* Not code (a literal pool): the next word. */
			p += 4;
			left -= 4;
			at += 4;
			continue;
		}
		a = &in->detail->arm64;
		/* The GG_State's allocation: nsize (x3) set, then a call through the register. */
		if (in->id == ARM64_INS_BLR && a->op_count == 1 && cmp >= 0 &&
		    a64_xreg(a->operands[0].reg) == cmp && !*gg_size && r.x[3].kind == A64_CONST &&
		    r.x[3].v < UINT32_MAX)
			*gg_size = (uint32_t)r.x[3].v;
		if (in->id == ARM64_INS_CMP && a->op_count == 2 && a->operands[0].type == ARM64_OP_REG &&
		    a->operands[1].type == ARM64_OP_REG && a64_width(a->operands[0].reg) == 8) {
			int ra = a64_xreg(a->operands[0].reg), rb = a64_xreg(a->operands[1].reg);

			if (ra >= 0 && rb >= 0 && r.x[rb].kind == A64_CONST &&
			    r.x[rb].v == LJ_ALLOCF_INTERNAL)
				cmp = ra;
			else if (ra >= 0 && rb >= 0 && r.x[ra].kind == A64_CONST &&
				 r.x[ra].v == LJ_ALLOCF_INTERNAL)
				cmp = rb;
		}
		a64_step(&r, in);
		/* An address made into a register (adrp; add): two different ones are no shape. */
		d = a->op_count && a->operands[0].type == ARM64_OP_REG ? a64_xreg(a->operands[0].reg) : -1;
		if (in->id == ARM64_INS_ADD && d >= 0 && r.x[d].kind == A64_CONST)
			made[d] = !made[d] || made[d] == r.x[d].v ? r.x[d].v : UINT64_MAX;
	}
	if (cmp >= 0 && made[cmp] && made[cmp] != UINT64_MAX) {
		*allocf = made[cmp];
		err = 0;
	}
	cs_free(in, 1);
	cs_close(&h);
	return err;
}

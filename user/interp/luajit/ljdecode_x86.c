// SPDX-License-Identifier: MIT
/*
 * ljdecode_x86.c - the x86-64 shape of lua_newstate that ljdecode.h
 * reads (capstone): `cmp $0x4d50, %reg` and `lea disp(%rip), %reg`, in
 * either order (GCC put the lea in a block after the compare's branch);
 * then `mov $size, %ecx` before the `call *%reg`: the GG_State's size.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "interp/luajit/ljdecode.h"

int ljdecode__allocf(const uint8_t *code, size_t len, uint64_t addr, uint64_t *allocf,
		     uint32_t *gg_size)
{
	uint64_t lea[X86_REG_ENDING] = { 0 }, ecx = 0;
	x86_reg cmp = X86_REG_INVALID;
	cs_insn *in = NULL;
	size_t n;
	csh h;
	int err = -ENOENT;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -EINVAL;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	*gg_size = 0;
	/* GCC's padding and data in the code stop a linear sweep: skip a byte there. */
	cs_option(h, CS_OPT_SKIPDATA, CS_OPT_ON);
	n = cs_disasm(h, code, len, addr, 0, &in);
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x;

		if (!in[i].detail || in[i].id == X86_INS_INVALID)
			continue;
		x = &in[i].detail->x86;
		/* The GG_State's allocation: nsize (%ecx) set, then a call through the register. */
		if (in[i].id == X86_INS_CALL && x->op_count == 1 && x->operands[0].type == X86_OP_REG &&
		    x->operands[0].reg == cmp && cmp != X86_REG_INVALID && !*gg_size)
			*gg_size = (uint32_t)ecx;
		if (x->op_count != 2)
			continue;
		if (in[i].id == X86_INS_MOV && x->operands[0].type == X86_OP_REG &&
		    (x->operands[0].reg == X86_REG_ECX || x->operands[0].reg == X86_REG_RCX) &&
		    x->operands[1].type == X86_OP_IMM)
			ecx = (uint64_t)x->operands[1].imm;
		else if (in[i].id == X86_INS_CMP && x->operands[0].type == X86_OP_REG &&
		    x->operands[0].size == 8 && x->operands[1].type == X86_OP_IMM &&
		    x->operands[1].imm == LJ_ALLOCF_INTERNAL)
			cmp = x->operands[0].reg;
		else if (in[i].id == X86_INS_LEA && x->operands[0].type == X86_OP_REG &&
			 x->operands[0].size == 8 && x->operands[1].type == X86_OP_MEM &&
			 x->operands[1].mem.base == X86_REG_RIP &&
			 x->operands[1].mem.index == X86_REG_INVALID) {
			uint64_t a = in[i].address + in[i].size + (uint64_t)x->operands[1].mem.disp;
			uint64_t *l = &lea[x->operands[0].reg];

			/* Two different addresses loaded into it: not the shape. */
			*l = !*l || *l == a ? a : UINT64_MAX;
		}
	}
	if (cmp != X86_REG_INVALID && lea[cmp] && lea[cmp] != UINT64_MAX) {
		*allocf = lea[cmp];
		err = 0;
	}
	if (n)
		cs_free(in, n);
	cs_close(&h);
	return err;
}

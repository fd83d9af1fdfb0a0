// SPDX-License-Identifier: MIT
/*
 * ljdecode_x86.c - the x86-64 shape of lua_newstate that ljdecode.h
 * reads, a step of interp/insnwalk.h's walk (GCC's padding and data in
 * the code stepped over): `cmp $0x4d50, %reg` and `lea disp(%rip), %reg`,
 * in either order (GCC put the lea in a block after the compare's
 * branch); then `mov $size, %ecx` before the `call *%reg`: the
 * GG_State's size.
 */
#include <errno.h>
#include <stdint.h>

#include "interp/insnwalk.h"
#include "interp/luajit/ljdecode.h"

struct allocf_walk {
	uint64_t lea[X86_REG_ENDING];	/* the address lea'd into a register (UINT64_MAX: two) */
	uint64_t ecx;			/* the last constant moved into %ecx */
	x86_reg cmp;			/* the register compared with LJ_ALLOCF_INTERNAL */
	uint32_t *gg_size;
};

static int allocf_step(void *ctx, const cs_insn *in)
{
	struct allocf_walk *w = ctx;
	const cs_x86 *x = &in->detail->x86;

	/* The GG_State's allocation: nsize (%ecx) set, then a call through the register. */
	if (in->id == X86_INS_CALL && x->op_count == 1 && x->operands[0].type == X86_OP_REG &&
	    x->operands[0].reg == w->cmp && w->cmp != X86_REG_INVALID && !*w->gg_size)
		*w->gg_size = (uint32_t)w->ecx;
	if (x->op_count != 2)
		return INSNWALK_ON;
	if (in->id == X86_INS_MOV && x->operands[0].type == X86_OP_REG &&
	    (x->operands[0].reg == X86_REG_ECX || x->operands[0].reg == X86_REG_RCX) &&
	    x->operands[1].type == X86_OP_IMM)
		w->ecx = (uint64_t)x->operands[1].imm;
	else if (in->id == X86_INS_CMP && x->operands[0].type == X86_OP_REG &&
		 x->operands[0].size == 8 && x->operands[1].type == X86_OP_IMM &&
		 x->operands[1].imm == LJ_ALLOCF_INTERNAL)
		w->cmp = x->operands[0].reg;
	else if (in->id == X86_INS_LEA && x->operands[0].type == X86_OP_REG &&
		 x->operands[0].size == 8 && x->operands[1].type == X86_OP_MEM &&
		 x->operands[1].mem.base == X86_REG_RIP &&
		 x->operands[1].mem.index == X86_REG_INVALID) {
		uint64_t a = in->address + in->size + (uint64_t)x->operands[1].mem.disp;
		uint64_t *l = &w->lea[x->operands[0].reg];

		/* Two different addresses loaded into it: not the shape. */
		*l = !*l || *l == a ? a : UINT64_MAX;
	}
	return INSNWALK_ON;
}

int ljdecode__allocf(const uint8_t *code, size_t len, uint64_t addr, uint64_t *allocf,
		     uint32_t *gg_size)
{
	struct allocf_walk w = { .cmp = X86_REG_INVALID, .gg_size = gg_size };
	int err;

	*gg_size = 0;
	err = insnwalk(INSNWALK_X86_64, code, len, addr, 0, allocf_step, &w);
	if (err < 0)
		return err;
	if (w.cmp == X86_REG_INVALID || !w.lea[w.cmp] || w.lea[w.cmp] == UINT64_MAX)
		return -ENOENT;
	*allocf = w.lea[w.cmp];
	return 0;
}

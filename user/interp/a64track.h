/* SPDX-License-Identifier: MIT */
/*
 * interp/a64track.h - what the general registers of AArch64 code hold, as
 * far as a straight run of it says (capstone ARM64): the addresses made by
 * adrp and add, the constants movz gives, the words loaded from such an
 * address (ldr, ldp), and a GOT slot's content plus an offset (PIE code
 * that reaches a symbol through its GOT). What pydecode_arm64.c and
 * ljdecode_arm64.c read their shapes with; the shapes themselves are
 * theirs. Anything else an instruction writes to a register forgets that
 * register; a call (bl, blr) forgets x0 to x18 (AAPCS64's caller-saved).
 */
#ifndef HEAPSNOOP_ARCH_A64TRACK_H
#define HEAPSNOOP_ARCH_A64TRACK_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum a64_kind {
	A64_NONE = 0,
	A64_CONST,	/* v: an address or constant (adrp, add, movz) */
	A64_LOAD,	/* the @width bytes at address v (ldr, ldp from a CONST) */
	A64_SLOT,	/* the content of the 8-byte slot v, plus off */
	A64_SLOTLOAD,	/* the @width bytes at (the content of slot v) + off */
};

struct a64_val {
	enum a64_kind kind;
	uint8_t width;
	uint64_t v;
	int64_t off;
};

struct a64_regs {
	struct a64_val x[31];
};

/* x0..x30 of a capstone register (w or x), or -1 (sp, xzr, vector ...). */
static inline int a64_xreg(unsigned int reg)
{
	if (reg >= ARM64_REG_X0 && reg <= ARM64_REG_X28)
		return (int)(reg - ARM64_REG_X0);
	if (reg == ARM64_REG_X29)
		return 29;
	if (reg == ARM64_REG_X30)
		return 30;
	if (reg >= ARM64_REG_W0 && reg <= ARM64_REG_W30)
		return (int)(reg - ARM64_REG_W0);
	return -1;
}

static inline int a64_width(unsigned int reg)
{
	return reg >= ARM64_REG_W0 && reg <= ARM64_REG_W30 ? 4 : 8;
}

static inline uint64_t a64_imm(const cs_arm64_op *op)
{
	uint64_t v = (uint64_t)op->imm;

	if (op->shift.type == ARM64_SFT_LSL && op->shift.value < 64)
		v <<= op->shift.value;
	return v;
}

/* A direct branch (b, b.cond, cbz, cbnz, tbz, tbnz): its target. */
static inline bool a64_branch_target(const cs_insn *in, uint64_t *target)
{
	const cs_arm64 *a = &in->detail->arm64;

	switch (in->id) {
	case ARM64_INS_B:
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		break;
	default:
		return false;
	}
	if (!a->op_count || a->operands[a->op_count - 1].type != ARM64_OP_IMM)
		return false;
	*target = (uint64_t)a->operands[a->op_count - 1].imm;
	return true;
}

/* b without a condition: the run of code ends (or goes on elsewhere). */
static inline bool a64_is_b(const cs_insn *in)
{
	return in->id == ARM64_INS_B && in->detail->arm64.cc == ARM64_CC_INVALID;
}

/* The value of a load of @width bytes at [base + disp]. */
static inline struct a64_val a64_load(const struct a64_val *base, int64_t disp, int width)
{
	if (base->kind == A64_CONST)
		return (struct a64_val){ .kind = A64_LOAD, .width = (uint8_t)width,
					 .v = base->v + (uint64_t)disp };
	if (base->kind == A64_SLOT)
		return (struct a64_val){ .kind = A64_SLOTLOAD, .width = (uint8_t)width, .v = base->v,
					 .off = base->off + disp };
	return (struct a64_val){ 0 };
}

/* @in's effect on @r. */
static inline void a64_step(struct a64_regs *r, const cs_insn *in)
{
	const cs_arm64 *a = &in->detail->arm64;
	const cs_arm64_op *op = a->operands;
	int d = a->op_count && op[0].type == ARM64_OP_REG ? a64_xreg(op[0].reg) : -1;
	int s = a->op_count > 1 && op[1].type == ARM64_OP_REG ? a64_xreg(op[1].reg) : -1;
	struct a64_val v = { 0 };

	/* A pre- or post-indexed access changes its base register: forgotten. */
	for (int i = 0; a->writeback && i < a->op_count; i++)
		if (op[i].type == ARM64_OP_MEM && a64_xreg(op[i].mem.base) >= 0)
			r->x[a64_xreg(op[i].mem.base)] = (struct a64_val){ 0 };
	switch (in->id) {
	case ARM64_INS_ADRP:
		if (d >= 0 && a->op_count == 2 && op[1].type == ARM64_OP_IMM)
			v = (struct a64_val){ .kind = A64_CONST, .v = (uint64_t)op[1].imm };
		break;
	case ARM64_INS_MOVZ:
	case ARM64_INS_MOV:
		if (a->op_count == 2 && op[1].type == ARM64_OP_IMM)
			v = (struct a64_val){ .kind = A64_CONST, .v = a64_imm(&op[1]) };
		else if (a->op_count == 2 && s >= 0 && a64_width(op[0].reg) == 8)
			v = r->x[s];
		break;
	case ARM64_INS_ADD:
		if (a->op_count == 3 && s >= 0 && op[2].type == ARM64_OP_IMM &&
		    a64_width(op[0].reg) == 8) {
			uint64_t imm = a64_imm(&op[2]);

			v = r->x[s];
			if (v.kind == A64_CONST)
				v.v += imm;
			else if (v.kind == A64_LOAD && v.width == 8)
				v = (struct a64_val){ .kind = A64_SLOT, .v = v.v, .off = (int64_t)imm };
			else if (v.kind == A64_SLOT)
				v.off += (int64_t)imm;
			else
				v = (struct a64_val){ 0 };
		}
		break;
	case ARM64_INS_LDR:
		if (a->op_count == 2 && op[1].type == ARM64_OP_MEM && !a->writeback &&
		    op[1].mem.index == ARM64_REG_INVALID && a64_xreg(op[1].mem.base) >= 0)
			v = a64_load(&r->x[a64_xreg(op[1].mem.base)], op[1].mem.disp, a64_width(op[0].reg));
		else if (a->op_count == 2 && op[1].type == ARM64_OP_IMM)	/* a literal */
			v = (struct a64_val){ .kind = A64_LOAD, .width = (uint8_t)a64_width(op[0].reg),
					      .v = (uint64_t)op[1].imm };
		break;
	case ARM64_INS_LDP:
		if (a->op_count == 3 && op[2].type == ARM64_OP_MEM && !a->writeback && s >= 0 &&
		    op[2].mem.index == ARM64_REG_INVALID && a64_xreg(op[2].mem.base) >= 0) {
			int w = a64_width(op[0].reg);
			struct a64_val base = r->x[a64_xreg(op[2].mem.base)];

			if (d >= 0)
				r->x[d] = a64_load(&base, op[2].mem.disp, w);
			r->x[s] = a64_load(&base, op[2].mem.disp + w, w);
			return;
		}
		if (s >= 0)
			r->x[s] = (struct a64_val){ 0 };
		break;
	case ARM64_INS_BL:
	case ARM64_INS_BLR:
		memset(r->x, 0, 19 * sizeof(r->x[0]));
		return;
	/* Those that write no general register. */
	case ARM64_INS_CMP:
	case ARM64_INS_CMN:
	case ARM64_INS_TST:
	case ARM64_INS_STR:
	case ARM64_INS_STRB:
	case ARM64_INS_STRH:
	case ARM64_INS_STUR:
	case ARM64_INS_STP:
	case ARM64_INS_B:
	case ARM64_INS_BR:
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
	case ARM64_INS_RET:
	case ARM64_INS_NOP:
	case ARM64_INS_HINT:
		return;
	default:
		break;
	}
	if (d >= 0)
		r->x[d] = v;
}

#endif /* HEAPSNOOP_ARCH_A64TRACK_H */

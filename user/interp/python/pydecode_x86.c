// SPDX-License-Identifier: MIT
/*
 * pydecode_x86.c - the x86-64 shapes of CPython's functions that
 * pydecode.h reads, each a step of interp/insnwalk.h's walk. Memory
 * operands are %rip-relative (PIE and non-PIE code alike) or absolute
 * (no base, no index).
 */
#include <errno.h>
#include <stdbool.h>

#include "interp/insnwalk.h"
#include "interp/python/pydecode.h"

/* Instructions looked at in a function's start: the shapes are within 16. */
#define HEAD_INSNS 24

/* The address a memory operand names, if it names one without registers. */
static bool mem_addr(const cs_insn *in, const cs_x86_op *op, uint64_t *addr)
{
	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID)
		return false;
	if (op->mem.base == X86_REG_RIP)
		*addr = in->address + in->size + (uint64_t)op->mem.disp;
	else if (op->mem.base == X86_REG_INVALID)
		*addr = (uint64_t)op->mem.disp;
	else
		return false;
	return true;
}

static bool is_jump(const cs_insn *in)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == CS_GRP_JUMP || in->detail->groups[i] == CS_GRP_RET)
			return true;
	return false;
}

/* mov m64, %reg: the register loaded from a named address, and where from. */
static bool load64(const cs_insn *in, x86_reg *reg, uint64_t *from)
{
	const cs_x86 *x = &in->detail->x86;

	if (in->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[1].size != 8 || !mem_addr(in, &x->operands[1], from))
		return false;
	*reg = x->operands[0].reg;
	return true;
}

struct key_walk {
	uint64_t slot[X86_REG_ENDING];	/* a GOT slot a register was loaded from */
	struct pydecode_key *key;
};

static int key_step(void *ctx, const cs_insn *in)
{
	struct key_walk *w = ctx;
	const cs_x86 *x = &in->detail->x86;
	x86_reg reg;
	uint64_t a;

	/* mov m32, %edi: the key, pthread_getspecific's argument */
	if (in->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[0].reg == X86_REG_EDI && x->operands[1].size == 4 &&
	    mem_addr(in, &x->operands[1], &a)) {
		*w->key = (struct pydecode_key){ .addr = a };
		return INSNWALK_FOUND;
	}
	/* mov GOT(%rip), %reg: a slot that holds _PyRuntime's address ... */
	if (load64(in, &reg, &a)) {
		w->slot[reg] = a;
		return INSNWALK_ON;
	}
	/* ... then lea off(%reg), %rX: the Py_tss_t PyThread_tss_get is given */
	if (in->id == X86_INS_LEA && x->op_count == 2 && x->operands[1].type == X86_OP_MEM &&
	    x->operands[1].mem.index == X86_REG_INVALID &&
	    x->operands[1].mem.base != X86_REG_INVALID && w->slot[x->operands[1].mem.base]) {
		*w->key = (struct pydecode_key){ .via_slot = true,
						 .addr = w->slot[x->operands[1].mem.base],
						 .off = x->operands[1].mem.disp };
		return INSNWALK_FOUND;
	}
	if (is_jump(in) && in->id != X86_INS_JE && in->id != X86_INS_JNE)
		return INSNWALK_END;
	return INSNWALK_ON;
}

int pydecode__tss_key(const uint8_t *code, size_t len, uint64_t addr, struct pydecode_key *key)
{
	struct key_walk w = { .key = key };

	return insnwalk__found(insnwalk(INSNWALK_X86_64, code, len, addr, HEAD_INSNS, key_step, &w));
}

int pydecode__jumps_out(const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx)
{
	return insnwalk__jumps_out(INSNWALK_X86_64, code, len, addr, fn, ctx);
}

struct hook_walk {
	uint64_t where[X86_REG_ENDING];	/* the address a register was loaded from (0: none) */
	uint64_t *hook, *pymalloc;
};

static int hook_step(void *ctx, const cs_insn *in)
{
	struct hook_walk *w = ctx;
	const cs_x86 *x = &in->detail->x86;
	x86_reg reg;
	uint64_t a;

	if (load64(in, &reg, &a)) {
		w->where[reg] = a;
		return INSNWALK_ON;
	}
	/* cmp $imm, %reg (the reg loaded from the hook) */
	if (in->id == X86_INS_CMP && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_IMM && w->where[x->operands[0].reg] &&
	    x->operands[1].imm > 0x1000) {
		*w->hook = w->where[x->operands[0].reg];
		*w->pymalloc = (uint64_t)x->operands[1].imm;
		return INSNWALK_FOUND;
	}
	if (is_jump(in) && in->id != X86_INS_JS)
		return INSNWALK_END;
	return INSNWALK_ON;
}

int pydecode__malloc_hook(const uint8_t *code, size_t len, uint64_t addr, uint64_t *hook,
			  uint64_t *pymalloc)
{
	struct hook_walk w = { .hook = hook, .pymalloc = pymalloc };

	return insnwalk__found(insnwalk(INSNWALK_X86_64, code, len, addr, HEAD_INSNS, hook_step, &w));
}

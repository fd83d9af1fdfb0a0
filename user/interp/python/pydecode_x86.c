// SPDX-License-Identifier: MIT
/*
 * pydecode_x86.c - the x86-64 shapes of CPython's functions that
 * pydecode.h reads (capstone). Memory operands are %rip-relative (PIE
 * and non-PIE code alike) or absolute (no base, no index).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>

#include "interp/python/pydecode.h"

/* Instructions looked at in a function's start: the shapes are within 16. */
#define HEAD_INSNS 24

static int open_cs(csh *h)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -EINVAL;
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

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

int pydecode__tss_key(const uint8_t *code, size_t len, uint64_t addr, struct pydecode_key *key)
{
	uint64_t slot[X86_REG_ENDING] = { 0 };
	cs_insn *in = NULL;
	size_t n;
	csh h;
	int err = -ENOENT;

	if (open_cs(&h))
		return -EINVAL;
	n = cs_disasm(h, code, len, addr, HEAD_INSNS, &in);
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &in[i].detail->x86;
		uint64_t a;

		/* mov m32, %edi: the key, pthread_getspecific's argument */
		if (in[i].id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
		    x->operands[0].reg == X86_REG_EDI && x->operands[1].size == 4 &&
		    mem_addr(&in[i], &x->operands[1], &a)) {
			*key = (struct pydecode_key){ .addr = a };
			err = 0;
			break;
		}
		/* mov GOT(%rip), %reg: a slot that holds _PyRuntime's address ... */
		if (in[i].id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
		    x->operands[1].size == 8 && mem_addr(&in[i], &x->operands[1], &a)) {
			slot[x->operands[0].reg] = a;
			continue;
		}
		/* ... then lea off(%reg), %rX: the Py_tss_t PyThread_tss_get is given */
		if (in[i].id == X86_INS_LEA && x->op_count == 2 && x->operands[1].type == X86_OP_MEM &&
		    x->operands[1].mem.index == X86_REG_INVALID &&
		    x->operands[1].mem.base != X86_REG_INVALID && slot[x->operands[1].mem.base]) {
			*key = (struct pydecode_key){ .via_slot = true, .addr = slot[x->operands[1].mem.base],
						      .off = x->operands[1].mem.disp };
			err = 0;
			break;
		}
		if (is_jump(&in[i]) && in[i].id != X86_INS_JE && in[i].id != X86_INS_JNE)
			break;
	}
	cs_free(in, n);
	cs_close(&h);
	return err;
}

int pydecode__jumps_out(const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx)
{
	const uint8_t *p = code;
	uint64_t at = addr;
	size_t left = len;
	cs_insn *in;
	int found = 0;
	csh h;

	if (open_cs(&h))
		return -EINVAL;
	in = cs_malloc(h);
	if (!in) {
		cs_close(&h);
		return -ENOMEM;
	}
	while (left) {
		const cs_x86 *x;

		if (!cs_disasm_iter(h, &p, &left, &at, in)) {
			/* Not code (padding, a jump table): step over a byte. */
			p++;
			left--;
			at++;
			continue;
		}
		x = &in->detail->x86;
		if (!is_jump(in) || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
			continue;
		if ((uint64_t)x->operands[0].imm < addr || (uint64_t)x->operands[0].imm >= addr + len) {
			fn(ctx, (uint64_t)x->operands[0].imm);
			found++;
		}
	}
	cs_free(in, 1);
	cs_close(&h);
	return found;
}

int pydecode__malloc_hook(const uint8_t *code, size_t len, uint64_t addr, uint64_t *hook,
			  uint64_t *pymalloc)
{
	unsigned int loaded[X86_REG_ENDING] = { 0 };
	uint64_t where[X86_REG_ENDING] = { 0 };
	cs_insn *in = NULL;
	size_t n;
	csh h;
	int err = -ENOENT;

	if (open_cs(&h))
		return -EINVAL;
	n = cs_disasm(h, code, len, addr, HEAD_INSNS, &in);
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &in[i].detail->x86;
		uint64_t a;

		if (in[i].id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
		    x->operands[1].size == 8 && mem_addr(&in[i], &x->operands[1], &a)) {
			loaded[x->operands[0].reg] = 1;
			where[x->operands[0].reg] = a;
			continue;
		}
		/* cmp $imm, %reg (the reg loaded from the hook) */
		if (in[i].id == X86_INS_CMP && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
		    x->operands[1].type == X86_OP_IMM && loaded[x->operands[0].reg] &&
		    x->operands[1].imm > 0x1000) {
			*hook = where[x->operands[0].reg];
			*pymalloc = (uint64_t)x->operands[1].imm;
			err = 0;
			break;
		}
		if (is_jump(&in[i]) && in[i].id != X86_INS_JS)
			break;
	}
	cs_free(in, n);
	cs_close(&h);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * probesite_x86.c - x86-64 probe placement by decoding a function's first
 * instructions with capstone (see probesite.h). Which instructions the
 * x86 uprobe code emulates: arch/x86/kernel/uprobes.c (branch_setup_xol_ops,
 * push_setup_xol_ops) and its nop emulation.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "probesite.h"

/* How far to look: allocator prologues decide within a few instructions. */
#define MAX_INSNS 16

/* SysV argument index of a register or any of its sub-registers, or -1. */
static int arg_index(unsigned int reg)
{
	switch (reg) {
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return 0;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return 1;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return 2;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return 3;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
		return 4;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return 5;
	default:
		return -1;
	}
}

static bool is_sp(unsigned int reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP ||
	       reg == X86_REG_SPL;
}

static bool has_group(const cs_insn *in, uint8_t group)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == group)
			return true;
	return false;
}

/* Does the kernel emulate this instruction rather than single-step it? */
static bool is_emulated(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_NOP:
		return true;
	case X86_INS_PUSH:
		/* push %reg64 only (0x50+r, with REX.B for r8-r15). */
		return x->op_count == 1 && x->operands[0].type == X86_OP_REG &&
		       x->operands[0].size == 8 && in->size <= 2;
	default:
		break;
	}
	/* jmp, jcc and call with a relative target; not jrcxz or loop. */
	switch (in->id) {
	case X86_INS_JRCXZ: case X86_INS_JECXZ: case X86_INS_JCXZ:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return false;
	default:
		break;
	}
	return (has_group(in, CS_GRP_JUMP) || has_group(in, CS_GRP_CALL)) &&
	       x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
}

/* `test %r,%r` on argument @arg, as a NULL check. */
static bool is_null_test(const cs_insn *in, int arg)
{
	const cs_x86 *x = &in->detail->x86;

	return in->id == X86_INS_TEST && x->op_count == 2 &&
	       x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_REG &&
	       x->operands[0].reg == x->operands[1].reg &&
	       arg_index(x->operands[0].reg) == arg && arg >= 0;
}

static void set_site(struct probesite *ps, const cs_insn *in, uint64_t start, bool emulated)
{
	ps->offset = (uint32_t)(in->address - start);
	ps->emulated = emulated;
	snprintf(ps->insn, sizeof(ps->insn), "%s %s", in->mnemonic, in->op_str);
}

int probesite__find(const uint8_t *code, size_t len, uint64_t addr,
		   unsigned int args_read, int null_arg, struct probesite *ps)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	bool prev_null_test = false;
	csh cs;
	cs_insn *in;
	int n = 0;

	memset(ps, 0, sizeof(*ps));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -EINVAL;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	in = cs_malloc(cs);
	if (!in) {
		cs_close(&cs);
		return -EINVAL;
	}
	snprintf(ps->why, sizeof(ps->why), "entry: nothing decodable");

	while (n++ < MAX_INSNS && cs_disasm_iter(cs, &p, &len, &a, in)) {
		cs_regs rr, rw;
		uint8_t nr = 0, nw = 0;
		const char *stop = NULL;

		if (n == 1)
			set_site(ps, in, addr, is_emulated(in));
		/* A NULL check's je/jz only skips calls that need no tracing. */
		if (prev_null_test && (in->id == X86_INS_JE)) {
			prev_null_test = false;
			continue;
		}
		if (is_emulated(in)) {
			set_site(ps, in, addr, true);
			snprintf(ps->why, sizeof(ps->why), n == 1 ?
				 "entry instruction is emulated" :
				 "first emulated instruction; %%rsp and arguments unchanged before it");
			goto out;
		}
		if (cs_regs_access(cs, in, rr, &nr, rw, &nw) != CS_ERR_OK) {
			stop = "registers it writes unknown";
		} else {
			for (int i = 0; i < nw && !stop; i++) {
				int arg = arg_index(rw[i]);

				if (is_sp(rw[i]))
					stop = "it moves %rsp";
				else if (arg >= 0 && (args_read & PS_ARG(arg)))
					stop = "it writes an argument register";
			}
		}
		if (!stop && (has_group(in, CS_GRP_JUMP) || has_group(in, CS_GRP_CALL) ||
			      has_group(in, CS_GRP_RET) || has_group(in, CS_GRP_INT) ||
			      has_group(in, CS_GRP_IRET)))
			stop = "it transfers control";
		if (stop) {
			snprintf(ps->why, sizeof(ps->why), "entry: `%s %s` at +%u comes first and %s",
				 in->mnemonic, in->op_str, (unsigned int)(in->address - addr), stop);
			break;
		}
		prev_null_test = is_null_test(in, null_arg);
	}
	/* No provably equivalent site: the entry, whatever it costs. */
	ps->offset = 0;
	if (n > MAX_INSNS)
		snprintf(ps->why, sizeof(ps->why), "entry: no emulated instruction in the first %d",
			 MAX_INSNS);
out:
	cs_free(in, 1);
	cs_close(&cs);
	return 0;
}

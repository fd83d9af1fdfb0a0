// SPDX-License-Identifier: MIT
/*
 * probesite_arm64.c - probe placement on AArch64 (see probesite.h), by
 * decoding a function's first instructions with capstone's ARM64 mode.
 * Which instructions the arm64 uprobe code simulates instead of stepping
 * out of line: arch/arm64/kernel/probes/decode-insn.c
 * (arm_probe_decode_insn): b, b.cond, cbz/cbnz, tbz/tbnz, br/blr/ret,
 * adr/adrp, ldr/ldrsw (literal).
 *
 * At the site, a uretprobe takes the return address from x30 (and puts its
 * trampoline there): every instruction before the site must leave x30
 * alone, neither write it nor read it (a stp x29, x30 saves the address the
 * function will return through), and leave sp and the argument registers
 * the probe reads unchanged. bl and blr write x30: never a site.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "probesite.h"

/* How far to look: allocator prologues decide within a few instructions. */
#define MAX_INSNS 16

/* AAPCS64 argument index (x0..x7, w0..w7) of a register, or -1. */
static int arg_index(unsigned int reg)
{
	if (reg >= ARM64_REG_X0 && reg <= ARM64_REG_X7)
		return (int)(reg - ARM64_REG_X0);
	if (reg >= ARM64_REG_W0 && reg <= ARM64_REG_W7)
		return (int)(reg - ARM64_REG_W0);
	return -1;
}

static bool is_sp(unsigned int reg)
{
	return reg == ARM64_REG_SP || reg == ARM64_REG_WSP;
}

static bool is_lr(unsigned int reg)
{
	return reg == ARM64_REG_X30 || reg == ARM64_REG_W30;
}

/* Does the kernel simulate this instruction (and leave x30 as it is)? */
static bool is_simulated(const cs_insn *in)
{
	const cs_arm64 *a = &in->detail->arm64;

	switch (in->id) {
	case ARM64_INS_B: case ARM64_INS_CBZ: case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ: case ARM64_INS_TBNZ: case ARM64_INS_BR:
	case ARM64_INS_RET: case ARM64_INS_ADR: case ARM64_INS_ADRP:
		return true;
	case ARM64_INS_LDR: case ARM64_INS_LDRSW:
		/* The literal form: a register and a pc-relative address. */
		return a->op_count == 2 && a->operands[1].type == ARM64_OP_IMM;
	default:
		return false;
	}
}

static void set_site(struct probesite *ps, const cs_insn *in, uint64_t start, bool simulated)
{
	ps->offset = (uint32_t)(in->address - start);
	ps->emulated = simulated;
	snprintf(ps->insn, sizeof(ps->insn), "%s %s", in->mnemonic, in->op_str);
}

/*
 * A hint other than bti (hint #32..#38): capstone 4 decodes paciasp,
 * autiasp and the other pointer-authentication hints as "hint #N" and
 * says no register of them, but they sign or authenticate x30 (or x17).
 * A site after paciasp would hand the uretprobe a signed return address
 * and the function's autiasp an unsigned trampoline: never.
 */
static bool is_opaque_hint(const cs_insn *in)
{
	const cs_arm64 *a = &in->detail->arm64;
	int64_t imm;

	if (in->id != ARM64_INS_HINT)
		return false;
	if (a->op_count != 1 || a->operands[0].type != ARM64_OP_IMM)
		return true;
	imm = a->operands[0].imm;
	return !(imm >= 32 && imm <= 38 && !(imm & 1));
}

/* Why an instruction before any site ends the search, or NULL. */
static const char *blocks(csh cs, cs_insn *in, unsigned int args_read)
{
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;

	if (is_opaque_hint(in))
		return "it may sign or authenticate x30 (a pointer-authentication hint)";
	if (cs_regs_access(cs, in, rr, &nr, rw, &nw) != CS_ERR_OK)
		return "registers it uses unknown";
	for (int i = 0; i < nr; i++)
		if (is_lr(rr[i]))
			return "it reads x30, the return address";
	for (int i = 0; i < nw; i++) {
		int arg = arg_index(rw[i]);

		if (is_sp(rw[i]))
			return "it moves sp";
		if (is_lr(rw[i]))
			return "it writes x30, the return address";
		if (arg >= 0 && (args_read & PS_ARG(arg)))
			return "it writes an argument register";
	}
	for (int i = 0; i < in->detail->groups_count; i++) {
		uint8_t g = in->detail->groups[i];

		if (g == CS_GRP_JUMP || g == CS_GRP_CALL || g == CS_GRP_RET || g == CS_GRP_INT)
			return "it transfers control";
	}
	return NULL;
}

int probesite__find(const uint8_t *code, size_t len, uint64_t addr,
		   unsigned int args_read, int null_arg, struct probesite *ps)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	csh cs;
	cs_insn *in;
	int n = 0;

	(void)null_arg;	/* cbz x0 is simulated: a site itself */
	memset(ps, 0, sizeof(*ps));
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &cs) != CS_ERR_OK)
		return -EINVAL;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(cs);
	if (!in) {
		cs_close(&cs);
		return -EINVAL;
	}
	snprintf(ps->why, sizeof(ps->why), "entry: nothing decodable");
	while (n++ < MAX_INSNS && cs_disasm_iter(cs, &p, &len, &a, in)) {
		const char *stop;

		if (n == 1)
			set_site(ps, in, addr, is_simulated(in));
		if (is_simulated(in)) {
			set_site(ps, in, addr, true);
			snprintf(ps->why, sizeof(ps->why), n == 1 ?
				 "entry instruction is simulated" :
				 "first simulated instruction; sp, x30 and arguments unchanged before it");
			goto out;
		}
		stop = blocks(cs, in, args_read);
		if (stop) {
			snprintf(ps->why, sizeof(ps->why), "entry: `%s %s` at +%u comes first and %s",
				 in->mnemonic, in->op_str, (unsigned int)(in->address - addr), stop);
			break;
		}
	}
	/* No provably equivalent site: the entry, whatever it costs. */
	ps->offset = 0;
	if (n > MAX_INSNS)
		snprintf(ps->why, sizeof(ps->why), "entry: no simulated instruction in the first %d",
			 MAX_INSNS);
out:
	cs_free(in, 1);
	cs_close(&cs);
	return 0;
}

// SPDX-License-Identifier: MIT
/* insnwalk.c - one walk over a function's instructions (see insnwalk.h). */
#include <stdbool.h>

#include "interp/a64track.h"
#include "interp/insnwalk.h"

int insnwalk(enum insnwalk_arch arch, const uint8_t *code, size_t len, uint64_t addr, size_t max,
	     insnwalk_step_fn step, void *ctx)
{
	/* What a byte or word that does not decode is stepped over by. */
	size_t unit = arch == INSNWALK_ARM64 ? 4 : 1;
	const uint8_t *p = code;
	uint64_t at = addr;
	size_t left = len, n = 0;
	int ret = INSNWALK_ON;
	cs_insn *in;
	csh h;

	if (cs_open(arch == INSNWALK_ARM64 ? CS_ARCH_ARM64 : CS_ARCH_X86,
		    arch == INSNWALK_ARM64 ? CS_MODE_ARM : CS_MODE_64, &h) != CS_ERR_OK)
		return -EINVAL;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	if (!in) {
		cs_close(&h);
		return -ENOMEM;
	}
	while (left >= unit && (!max || n < max)) {
		if (!cs_disasm_iter(h, &p, &left, &at, in)) {
			p += unit;
			left -= unit;
			at += unit;
			continue;
		}
		n++;
		ret = step(ctx, in);
		if (ret != INSNWALK_ON)
			break;
	}
	cs_free(in, 1);
	cs_close(&h);
	return ret;
}

struct jumps_walk {
	enum insnwalk_arch arch;
	uint64_t lo, hi;
	void (*fn)(void *ctx, uint64_t target);
	void *ctx;
	int found;
};

/* x86-64: a jump (jmp, jcc, loop) to an immediate address. */
static bool x86_target(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;
	bool jump = false;

	for (int i = 0; i < in->detail->groups_count; i++)
		jump |= in->detail->groups[i] == CS_GRP_JUMP;
	if (!jump || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

static int jumps_step(void *ctx, const cs_insn *in)
{
	struct jumps_walk *w = ctx;
	uint64_t t;
	bool jump = w->arch == INSNWALK_ARM64 ? a64_branch_target(in, &t) : x86_target(in, &t);

	if (jump && (t < w->lo || t >= w->hi)) {
		w->fn(w->ctx, t);
		w->found++;
	}
	return INSNWALK_ON;
}

int insnwalk__jumps_out(enum insnwalk_arch arch, const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx)
{
	struct jumps_walk w = { .arch = arch, .lo = addr, .hi = addr + len, .fn = fn, .ctx = ctx };
	int err = insnwalk(arch, code, len, addr, 0, jumps_step, &w);

	return err < 0 ? err : w.found;
}

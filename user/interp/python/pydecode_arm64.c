// SPDX-License-Identifier: MIT
/*
 * pydecode_arm64.c - the AArch64 shapes of CPython's functions that
 * pydecode.h reads (capstone ARM64), followed with interp/a64track.h: an
 * address is made by adrp and add (or loaded from a GOT slot so made), a
 * word loaded from it by ldr or ldp. Shapes from Debian 12's python3.11
 * (3.11.2) and Debian 13's python3.13 (3.13.5) for arm64, both GCC:
 *
 *   PyGILState_GetThisThreadState   adrp x0, _PyRuntime; add x0, x0, #lo;
 *                                   ldr w1, [x0, #key - 4] (_is_initialized;
 *                                   cbz); ldr w0, [x0, #key];
 *                                   b pthread_getspecific
 *   PyObject_Malloc                 adrp+add: &_PyObject (3.11) or
 *                                   _PyRuntime (3.13); adrp+add: pymalloc's
 *                                   function; ldp/ldr of the hook;
 *                                   cmp hook, function
 *
 * and, not met in a build here but read the same way, a libpython (PIE)
 * that reaches _PyRuntime through its GOT (adrp; ldr x0, [x0, #got]) and
 * hands PyThread_tss_get the Py_tss_t (add) or pthread_getspecific the key
 * (ldr w0).
 */
#include <errno.h>

#include "interp/a64track.h"
#include "interp/python/pydecode.h"

/* Instructions looked at in a function's start: the shapes are within 16. */
#define HEAD_INSNS 24

static int open_cs(csh *h)
{
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, h) != CS_ERR_OK)
		return -EINVAL;
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

/* Where x0 says the key is, at the tail call: a Py_tss_t's _key (+4). */
static int key_of(const struct a64_val *x0, struct pydecode_key *key)
{
	switch (x0->kind) {
	case A64_LOAD:		/* ldr w0, [_PyRuntime + key] */
		if (x0->width != 4)
			return -ENOENT;
		*key = (struct pydecode_key){ .addr = x0->v };
		return 0;
	case A64_CONST:		/* the Py_tss_t's address, to PyThread_tss_get */
		*key = (struct pydecode_key){ .addr = x0->v + 4 };
		return 0;
	case A64_SLOT:		/* the same, _PyRuntime from its GOT slot */
		*key = (struct pydecode_key){ .via_slot = true, .addr = x0->v, .off = x0->off };
		return 0;
	case A64_SLOTLOAD:	/* the key, _PyRuntime from its GOT slot */
		if (x0->width != 4)
			return -ENOENT;
		*key = (struct pydecode_key){ .via_slot = true, .addr = x0->v, .off = x0->off - 4 };
		return 0;
	default:
		return -ENOENT;
	}
}

int pydecode__tss_key(const uint8_t *code, size_t len, uint64_t addr, struct pydecode_key *key)
{
	struct a64_regs r = { 0 };
	cs_insn *in = NULL;
	size_t n;
	csh h;
	int err = -ENOENT;

	if (open_cs(&h))
		return -EINVAL;
	n = cs_disasm(h, code, len, addr, HEAD_INSNS, &in);
	for (size_t i = 0; i < n; i++) {
		/* The call or tail call that is given the key: x0 says where it was. */
		if (a64_is_b(&in[i]) || in[i].id == ARM64_INS_BL) {
			err = key_of(&r.x[0], key);
			break;
		}
		if (in[i].id == ARM64_INS_RET || in[i].id == ARM64_INS_BR ||
		    in[i].id == ARM64_INS_BLR)
			break;
		a64_step(&r, &in[i]);
	}
	cs_free(in, n);
	cs_close(&h);
	return err;
}

int pydecode__jumps_out(const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx)
{
	const uint8_t *p = code;
	uint64_t at = addr, target;
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
	while (left >= 4) {
		if (!cs_disasm_iter(h, &p, &left, &at, in)) {
			/* Not code (a literal pool, a jump table): the next word. */
			p += 4;
			left -= 4;
			at += 4;
			continue;
		}
		if (!a64_branch_target(in, &target))
			continue;
		if (target < addr || target >= addr + len) {
			fn(ctx, target);
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
	struct a64_regs r = { 0 };
	cs_insn *in = NULL;
	size_t n;
	csh h;
	int err = -ENOENT;

	if (open_cs(&h))
		return -EINVAL;
	n = cs_disasm(h, code, len, addr, HEAD_INSNS, &in);
	for (size_t i = 0; i < n; i++) {
		const cs_arm64 *a = &in[i].detail->arm64;

		/* cmp xA, xB: one loaded from the hook, the other pymalloc's function. */
		if (in[i].id == ARM64_INS_CMP && a->op_count == 2 && a->operands[0].type == ARM64_OP_REG &&
		    a->operands[1].type == ARM64_OP_REG) {
			int ra = a64_xreg(a->operands[0].reg), rb = a64_xreg(a->operands[1].reg);
			const struct a64_val *va, *vb;

			if (ra < 0 || rb < 0)
				continue;
			va = &r.x[ra];
			vb = &r.x[rb];
			if (va->kind == A64_CONST) {
				const struct a64_val *t = va;

				va = vb;
				vb = t;
			}
			if (va->kind == A64_LOAD && va->width == 8 && vb->kind == A64_CONST &&
			    vb->v > 0x1000) {
				*hook = va->v;
				*pymalloc = vb->v;
				err = 0;
				break;
			}
			continue;
		}
		if (a64_is_b(&in[i]) || in[i].id == ARM64_INS_RET || in[i].id == ARM64_INS_BR ||
		    in[i].id == ARM64_INS_BL || in[i].id == ARM64_INS_BLR)
			break;
		a64_step(&r, &in[i]);
	}
	cs_free(in, n);
	cs_close(&h);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * pydecode_arm64.c - the AArch64 shapes of CPython's functions that
 * pydecode.h reads, each a step of interp/insnwalk.h's walk, followed
 * with interp/a64track.h: an address is made by adrp and add (or loaded
 * from a GOT slot so made), a word loaded from it by ldr or ldp. Shapes from Debian 12's python3.11
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
#include <stdbool.h>

#include "interp/a64track.h"
#include "interp/insnwalk.h"
#include "interp/python/pydecode.h"

/* Instructions looked at in a function's start: the shapes are within 16. */
#define HEAD_INSNS 24

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

/* A branch that leaves the straight run: b, ret, br, bl, blr. */
static bool leaves(const cs_insn *in)
{
	return a64_is_b(in) || in->id == ARM64_INS_RET || in->id == ARM64_INS_BR ||
	       in->id == ARM64_INS_BL || in->id == ARM64_INS_BLR;
}

struct key_walk {
	struct a64_regs r;
	struct pydecode_key *key;
};

static int key_step(void *ctx, const cs_insn *in)
{
	struct key_walk *w = ctx;

	/* The call or tail call that is given the key: x0 says where it was. */
	if (a64_is_b(in) || in->id == ARM64_INS_BL)
		return key_of(&w->r.x[0], w->key) ? INSNWALK_END : INSNWALK_FOUND;
	if (leaves(in))
		return INSNWALK_END;
	a64_step(&w->r, in);
	return INSNWALK_ON;
}

int pydecode__tss_key(const uint8_t *code, size_t len, uint64_t addr, struct pydecode_key *key)
{
	struct key_walk w = { .key = key };

	return insnwalk__found(insnwalk(INSNWALK_ARM64, code, len, addr, HEAD_INSNS, key_step, &w));
}

int pydecode__jumps_out(const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx)
{
	return insnwalk__jumps_out(INSNWALK_ARM64, code, len, addr, fn, ctx);
}

struct hook_walk {
	struct a64_regs r;
	uint64_t *hook, *pymalloc;
};

static int hook_step(void *ctx, const cs_insn *in)
{
	struct hook_walk *w = ctx;
	const cs_arm64 *a = &in->detail->arm64;
	const struct a64_val *va, *vb, *t;
	int ra, rb;

	if (leaves(in))
		return INSNWALK_END;
	/* cmp xA, xB: one loaded from the hook, the other pymalloc's function. */
	if (in->id != ARM64_INS_CMP || a->op_count != 2 || a->operands[0].type != ARM64_OP_REG ||
	    a->operands[1].type != ARM64_OP_REG) {
		a64_step(&w->r, in);
		return INSNWALK_ON;
	}
	ra = a64_xreg(a->operands[0].reg);
	rb = a64_xreg(a->operands[1].reg);
	if (ra < 0 || rb < 0)
		return INSNWALK_ON;
	va = &w->r.x[ra];
	vb = &w->r.x[rb];
	if (va->kind == A64_CONST) {
		t = va;
		va = vb;
		vb = t;
	}
	if (va->kind != A64_LOAD || va->width != 8 || vb->kind != A64_CONST || vb->v <= 0x1000)
		return INSNWALK_ON;
	*w->hook = va->v;
	*w->pymalloc = vb->v;
	return INSNWALK_FOUND;
}

int pydecode__malloc_hook(const uint8_t *code, size_t len, uint64_t addr, uint64_t *hook,
			  uint64_t *pymalloc)
{
	struct hook_walk w = { .hook = hook, .pymalloc = pymalloc };

	return insnwalk__found(insnwalk(INSNWALK_ARM64, code, len, addr, HEAD_INSNS, hook_step, &w));
}

// SPDX-License-Identifier: MIT
/*
 * ehframe_expr.c - a row of unwind rules compiled to the walk's struct
 * ls_rule (see ehframe_int.h), DWARF expressions included: DW_OP_*
 * (DWARF 5, section 2.5) evaluated symbolically at one pc, kept where the
 * value reduces to [*](sp | fp | CFA + constant). That covers the known
 * forms: glibc's x86-64 __restore_rt (the CFA at *(rsp + 160), each
 * register at rsp + n), the x86-64 PLT's CFA (an expression of %rip & 15:
 * a constant at one pc), a stack realigned through %rbp (CFA = *(rbp -
 * 8)). A branch, arithmetic on an unknown value, a second dereference or a
 * register not followed makes the rule LS_RULE_BAD: the walk stops there,
 * unreadable, never wrong.
 */
#include <errno.h>

#include "ehframe_int.h"

/* Values a DWARF expression may stack. */
#define EXPR_DEPTH 8

/* A DWARF expression's value as [*](base + off); base -1: a constant. */
struct sym {
	int base;
	bool deref;
	int64_t off;
};

static bool is_const(const struct sym *s)
{
	return s->base < 0 && !s->deref;
}

/*
 * Evaluate expression @p[@len] symbolically: the callee's sp and fp, the
 * CFA (@cfa_known: pushed first, as for a register's rule) and the pc
 * (@pc: the frame's, a constant here). Anything that does not reduce to
 * [*](base + constant) fails: an arithmetic on an unknown value other
 * than adding a constant, a second dereference, a branch.
 */
static int sym_eval(const uint8_t *p, uint64_t len, bool cfa_known, uintptr_t pc, struct sym *out)
{
	struct sym st[EXPR_DEPTH];
	struct cur c = { p, p + len, false };
	unsigned int sp = 0;

	(void)pc;	/* aarch64: no register holds the pc */
	if (cfa_known)
		st[sp++] = (struct sym){ LS_BASE_CFA, false, 0 };
	while (c.p < c.end && !c.bad) {
		uint8_t op = (uint8_t)rd_fixed(&c, 1);
		struct sym *a, *b;
		uint64_t x, y;

		if (sp == EXPR_DEPTH)
			return -EINVAL;
		if (op >= 0x30 && op <= 0x4f) {	/* DW_OP_lit0..31 */
			st[sp++] = (struct sym){ -1, false, op - 0x30 };
			continue;
		}
		if ((op >= 0x70 && op <= 0x8f) || op == 0x92) {	/* DW_OP_breg0..31, bregx */
			uint64_t reg = op == 0x92 ? rd_uleb(&c) : (uint64_t)(op - 0x70);
			int64_t off = rd_sleb(&c);

			if (reg == LS_DW_SP)
				st[sp++] = (struct sym){ LS_BASE_SP, false, off };
			else if (reg == LS_DW_FP)
				st[sp++] = (struct sym){ LS_BASE_FP, false, off };
#if defined(__x86_64__)
			else if (reg == LS_DW_PC)
				st[sp++] = (struct sym){ -1, false, (int64_t)pc + off };
#endif
			else
				return -EINVAL;
			continue;
		}
		switch (op) {
		case 0x08: st[sp++] = (struct sym){ -1, false, (int64_t)rd_fixed(&c, 1) }; break;
		case 0x09: st[sp++] = (struct sym){ -1, false, (int8_t)rd_fixed(&c, 1) }; break;
		case 0x0a: st[sp++] = (struct sym){ -1, false, (int64_t)rd_fixed(&c, 2) }; break;
		case 0x0b: st[sp++] = (struct sym){ -1, false, (int16_t)rd_fixed(&c, 2) }; break;
		case 0x0c: st[sp++] = (struct sym){ -1, false, (int64_t)rd_fixed(&c, 4) }; break;
		case 0x0d: st[sp++] = (struct sym){ -1, false, (int32_t)rd_fixed(&c, 4) }; break;
		case 0x0e: case 0x0f:
			st[sp++] = (struct sym){ -1, false, (int64_t)rd_fixed(&c, 8) };
			break;
		case 0x10: st[sp++] = (struct sym){ -1, false, (int64_t)rd_uleb(&c) }; break;
		case 0x11: st[sp++] = (struct sym){ -1, false, rd_sleb(&c) }; break;
		case 0x12:	/* DW_OP_dup */
			if (!sp)
				return -EINVAL;
			st[sp] = st[sp - 1];
			sp++;
			break;
		case 0x13:	/* DW_OP_drop */
			if (!sp)
				return -EINVAL;
			sp--;
			break;
		case 0x14:	/* DW_OP_over */
			if (sp < 2)
				return -EINVAL;
			st[sp] = st[sp - 2];
			sp++;
			break;
		case 0x16: {	/* DW_OP_swap */
			struct sym t;

			if (sp < 2)
				return -EINVAL;
			t = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = t;
			break;
		}
		case 0x06:	/* DW_OP_deref */
			if (!sp || st[sp - 1].deref || st[sp - 1].base < 0)
				return -EINVAL;
			st[sp - 1].deref = true;
			break;
		case 0x9c:	/* DW_OP_call_frame_cfa */
			st[sp++] = (struct sym){ LS_BASE_CFA, false, 0 };
			break;
		case 0x23:	/* DW_OP_plus_uconst */
			if (!sp || st[sp - 1].deref)
				return -EINVAL;
			st[sp - 1].off += (int64_t)rd_uleb(&c);
			break;
		case 0x96:	/* DW_OP_nop */
			break;
		case 0x22: case 0x1c:	/* DW_OP_plus, DW_OP_minus */
			if (sp < 2)
				return -EINVAL;
			b = &st[--sp];
			a = &st[sp - 1];
			if (a->deref || b->deref)
				return -EINVAL;
			if (op == 0x22 && a->base < 0) {
				a->base = b->base;
				a->off += b->off;
			} else if (b->base < 0) {
				a->off = op == 0x22 ? a->off + b->off : a->off - b->off;
			} else if (op == 0x1c && a->base == b->base) {
				a->base = -1;
				a->off -= b->off;
			} else {
				return -EINVAL;
			}
			break;
		case 0x1a: case 0x21: case 0x27: case 0x1e: case 0x24: case 0x25: case 0x26:
		case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e:
			/* and or xor mul shl shr shra eq ge gt le lt ne: constants only */
			if (sp < 2 || !is_const(&st[sp - 1]) || !is_const(&st[sp - 2]))
				return -EINVAL;
			y = (uint64_t)st[--sp].off;
			x = (uint64_t)st[sp - 1].off;
			switch (op) {
			case 0x1a: x &= y; break;
			case 0x21: x |= y; break;
			case 0x27: x ^= y; break;
			case 0x1e: x *= y; break;
			case 0x24: x = y < 64 ? x << y : 0; break;
			case 0x25: x = y < 64 ? x >> y : 0; break;
			case 0x26: x = (uint64_t)((int64_t)x >> (y < 63 ? y : 63)); break;
			case 0x29: x = x == y; break;
			case 0x2a: x = (int64_t)x >= (int64_t)y; break;
			case 0x2b: x = (int64_t)x > (int64_t)y; break;
			case 0x2c: x = (int64_t)x <= (int64_t)y; break;
			case 0x2d: x = (int64_t)x < (int64_t)y; break;
			default: x = x != y; break;
			}
			st[sp - 1].off = (int64_t)x;
			break;
		default:
			return -EINVAL;
		}
	}
	if (c.bad || !sp)
		return -EINVAL;
	*out = st[sp - 1];
	return 0;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* One register's rule as how/base/off; false: not a form the walk follows. */
static bool compile_reg(const struct reg_rule *rr, uintptr_t pc, uint8_t *loc, int32_t *off)
{
	struct sym s;

	*off = 0;
	switch (rr->how) {
	case R_SAME:
		*loc = LS_LOC(LS_SAME, LS_BASE_CFA);
		return true;
	case R_UNDEF:
		*loc = LS_LOC(LS_UNDEF, LS_BASE_CFA);
		return true;
	case R_OFFSET:
	case R_VAL_OFFSET:
		if (!fits32(rr->off))
			return false;
		*loc = LS_LOC(rr->how == R_OFFSET ? LS_AT : LS_VAL, LS_BASE_CFA);
		*off = (int32_t)rr->off;
		return true;
	case R_REGISTER:
		/* The value sits in another register: only the frame pointer is followed. */
		if (rr->reg != LS_DW_FP)
			return false;
		*loc = LS_LOC(LS_VAL, LS_BASE_FP);
		return true;
	case R_EXPR:
	case R_VAL_EXPR:
		if (sym_eval(rr->expr, rr->len, true, pc, &s) || s.base < 0 || !fits32(s.off))
			return false;
		/* A saved register's expression is its address: one more load. */
		if (rr->how == R_EXPR && s.deref)
			return false;
		*loc = LS_LOC(rr->how == R_EXPR || s.deref ? LS_AT : LS_VAL, s.base);
		*off = (int32_t)s.off;
		return true;
	}
	return false;
}

void ehframe_expr__compile(const struct row *row, uintptr_t pc, bool signal, struct ls_rule *r)
{
	struct sym s = { LS_BASE_SP, false, row->cfa_off };
	int32_t off;

	memset(r, 0, sizeof(*r));
	r->flags = signal ? LS_RULE_SIGNAL : 0;
	if (row->cfa_is_expr) {
		if (sym_eval(row->cfa_expr, row->cfa_len, false, pc, &s) || s.base == LS_BASE_CFA ||
		    s.base < 0)
			goto bad;
	} else if (row->cfa_reg == LS_DW_FP) {
		s.base = LS_BASE_FP;
	} else if (row->cfa_reg != LS_DW_SP) {
		goto bad;	/* a CFA from a register not followed (a prologue's %r10) */
	}
	if (!fits32(s.off))
		goto bad;
	r->cfa_base = (uint8_t)s.base;
	r->cfa_off = (int32_t)s.off;
	if (s.deref)
		r->flags |= LS_RULE_CFA_DEREF;
	if (!compile_reg(&row->ra, pc, &r->ra, &r->ra_off))
		goto bad;
	if (!compile_reg(&row->fp, pc, &r->fp, &off))
		r->fp = LS_LOC(LS_UNDEF, LS_BASE_CFA);	/* the frame pointer unknown above */
	r->fp_off = off;
	if (!r->flags && r->ra == LS_LOC(LS_AT, LS_BASE_CFA) &&
	    (r->fp == LS_LOC(LS_SAME, LS_BASE_CFA) || r->fp == LS_LOC(LS_AT, LS_BASE_CFA)))
		r->flags = LS_RULE_PLAIN;
	return;
bad:
	r->flags |= LS_RULE_BAD;
}

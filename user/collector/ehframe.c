// SPDX-License-Identifier: MIT
/*
 * ehframe.c - an address's unwind rule from its module's .eh_frame (see
 * ehframe.h). The formats: .eh_frame_hdr and the pointer encodings
 * (DW_EH_PE_*) from the LSB's "Exception Frames"; CIEs, FDEs, the DW_CFA_*
 * instructions and the DW_OP_* expressions from DWARF 5 (sections 6.4 and
 * 2.5). Every read is bounded by the module's segment; an error or a form
 * not handled ends in -EINVAL or LS_RULE_BAD, never a guess.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "ehframe.h"

/* Pointer encodings: the format in the low nibble, the base in the high. */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

/* Remembered rows (DW_CFA_remember_state) a program may nest. */
#define STATE_DEPTH 8
/* Values a DWARF expression may stack. */
#define EXPR_DEPTH 8

/* A bounded reader over [p, end). */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_fixed(struct cur *c, unsigned int n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	/* Little-endian on both architectures. */
	memcpy(&v, c->p, n);
	c->p += n;
	return v;
}

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (!c->bad) {
		uint8_t b;

		if (c->p >= c->end || shift > 63) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	while (!c->bad) {
		if (c->p >= c->end || shift > 63) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/*
 * A pointer in encoding @enc, relative to its own address (pcrel) or to
 * @data (datarel, .eh_frame_hdr's own start). Indirect pointers (only
 * personality routines use them) are read as the slot's address, never
 * followed: nothing here needs their value.
 */
static uint64_t rd_ptr(struct cur *c, uint8_t enc, uintptr_t data)
{
	uintptr_t at = (uintptr_t)c->p;
	uint64_t v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = rd_fixed(c, 8); break;
	case PE_ULEB128: v = rd_uleb(c); break;
	case PE_UDATA2: v = rd_fixed(c, 2); break;
	case PE_UDATA4: v = rd_fixed(c, 4); break;
	case PE_UDATA8: v = rd_fixed(c, 8); break;
	case PE_SLEB128: v = (uint64_t)rd_sleb(c); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)rd_fixed(c, 2); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)rd_fixed(c, 4); break;
	case PE_SDATA8: v = rd_fixed(c, 8); break;
	default: c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: v += at; break;
	case PE_DATAREL: v += data; break;
	default: c->bad = true; return 0;	/* textrel, funcrel, aligned: not in .eh_frame */
	}
	return v;
}

/* How one register's caller value is found, as the instructions say. */
enum {
	R_SAME,		/* DW_CFA_same_value, and every register not mentioned */
	R_UNDEF,
	R_OFFSET,	/* at CFA + off */
	R_VAL_OFFSET,	/* CFA + off */
	R_REGISTER,	/* in register reg */
	R_EXPR,		/* at the expression's value */
	R_VAL_EXPR,	/* the expression's value */
};

struct reg_rule {
	uint8_t how;
	uint32_t reg;
	int64_t off;
	const uint8_t *expr;
	uint64_t len;
};

/* One row: the CFA (register + offset, or an expression) and the two followed. */
struct row {
	bool cfa_is_expr;
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	uint64_t cfa_len;
	struct reg_rule ra, fp;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_z, signal;
	const uint8_t *insn, *end;	/* initial instructions */
};

/*
 * The CIE at @p (its length field) within @c's bounds. Versions 1, 3 and 4
 * (4: address and segment sizes, 8 and 0 only); augmentations z, R, P, L,
 * S, and B and G (aarch64's BTI and MTE marks, no data). Returns 0 or
 * -EINVAL.
 */
static int cie_parse(const uint8_t *p, const struct cur *bounds, struct cie *cie)
{
	struct cur c = { p, bounds->end, false };
	const char *aug;
	uint64_t len = rd_fixed(&c, 4);
	const uint8_t *aug_end = NULL;
	uint8_t version;

	if (len == 0xffffffffu)
		len = rd_fixed(&c, 8);
	if (c.bad || !len || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	c.end = c.p + len;
	if (rd_fixed(&c, 4) != 0)	/* .eh_frame's CIE id */
		return -EINVAL;
	version = (uint8_t)rd_fixed(&c, 1);
	if (version != 1 && version != 3 && version != 4)
		return -EINVAL;
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p >= c.end)
		return -EINVAL;
	c.p++;
	if (version == 4 && (rd_fixed(&c, 1) != 8 || rd_fixed(&c, 1) != 0))
		return -EINVAL;
	memset(cie, 0, sizeof(*cie));
	cie->code_align = rd_uleb(&c);
	cie->data_align = rd_sleb(&c);
	cie->ra_reg = version == 1 ? rd_fixed(&c, 1) : rd_uleb(&c);
	cie->fde_enc = PE_ABSPTR;
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -EINVAL;
		aug_end = c.p + alen;
		cie->has_z = true;
		aug++;
	}
	for (; *aug && !c.bad; aug++) {
		switch (*aug) {
		case 'R':
			cie->fde_enc = (uint8_t)rd_fixed(&c, 1);
			break;
		case 'P': {
			uint8_t enc = (uint8_t)rd_fixed(&c, 1);

			rd_ptr(&c, enc & 0x7f, 0);
			break;
		}
		case 'L':
			rd_fixed(&c, 1);
			break;
		case 'S':
			cie->signal = true;
			break;
		case 'B':
		case 'G':
			break;
		default:
			/* Unknown: its data can be skipped only past everything else. */
			if (!cie->has_z)
				return -EINVAL;
			goto done;
		}
	}
done:
	if (c.bad || cie->code_align == 0)
		return -EINVAL;
	if (aug_end)
		c.p = aug_end;
	cie->insn = c.p;
	cie->end = c.end;
	return 0;
}

/*
 * The FDE at @p (its length field): its CIE parsed into *@cie, its range
 * into *@start and *@range, its instructions into @insn..@end. Returns 0;
 * 1 for a CIE (not an FDE); -EINVAL. *@next: the entry after it (NULL at
 * .eh_frame's terminator).
 */
static int fde_parse(const uint8_t *p, const struct cur *bounds, struct cie *cie,
		     uint64_t *start, uint64_t *range, const uint8_t **insn, const uint8_t **end,
		     const uint8_t **next)
{
	struct cur c = { p, bounds->end, false };
	const uint8_t *id_at;
	uint64_t len = rd_fixed(&c, 4), id;

	*next = NULL;
	if (len == 0xffffffffu)
		len = rd_fixed(&c, 8);
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	if (!len)
		return 1;	/* the terminator */
	c.end = c.p + len;
	*next = c.end;
	id_at = c.p;
	id = rd_fixed(&c, 4);
	if (c.bad)
		return -EINVAL;
	if (!id)
		return 1;
	/* The CIE pointer counts back from its own field. */
	if (id > (uint64_t)(id_at - bounds->p) || cie_parse(id_at - id, bounds, cie))
		return -EINVAL;
	*start = rd_ptr(&c, cie->fde_enc, 0);
	*range = rd_ptr(&c, cie->fde_enc & 0x0f, 0);
	if (cie->has_z) {
		uint64_t alen = rd_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -EINVAL;
		c.p += alen;
	}
	if (c.bad)
		return -EINVAL;
	*insn = c.p;
	*end = c.end;
	return 0;
}

/* The FDE for @addr: by .eh_frame_hdr's table, else a walk of .eh_frame. */
static int fde_find(const struct ls_module *mod, uintptr_t addr, struct cie *cie,
		    const uint8_t **insn, const uint8_t **end, uint64_t *start)
{
	struct cur bounds = { (const uint8_t *)mod->lo, (const uint8_t *)mod->hi, false };
	struct cur c = { mod->hdr, bounds.end, false };
	uintptr_t hdr = (uintptr_t)mod->hdr;
	uint8_t ptr_enc, count_enc, table_enc;
	const uint8_t *eh, *fde, *next;
	uint64_t count, range;

	if (!mod->hdr || hdr < mod->lo || hdr >= mod->hi || rd_fixed(&c, 1) != 1)
		return -ENOENT;
	ptr_enc = (uint8_t)rd_fixed(&c, 1);
	count_enc = (uint8_t)rd_fixed(&c, 1);
	table_enc = (uint8_t)rd_fixed(&c, 1);
	eh = (const uint8_t *)(uintptr_t)rd_ptr(&c, ptr_enc, hdr);
	count = count_enc == PE_OMIT ? 0 : rd_ptr(&c, count_enc, hdr);
	if (c.bad)
		return -EINVAL;
	if (count && table_enc == (PE_DATAREL | PE_SDATA4)) {
		/* Sorted (initial location, FDE) pairs, 4 bytes each, from hdr. */
		const int32_t *t = (const int32_t *)c.p;
		uint64_t lo = 0, hi = count;

		if (count > (uint64_t)(c.end - c.p) / 8)
			return -EINVAL;
		while (hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (hdr + (intptr_t)t[2 * mid] <= addr)
				lo = mid;
			else
				hi = mid;
		}
		if (hdr + (intptr_t)t[2 * lo] > addr)
			return -ENOENT;
		fde = (const uint8_t *)(hdr + (intptr_t)t[2 * lo + 1]);
		if ((uintptr_t)fde < mod->lo || (uintptr_t)fde >= mod->hi)
			return -EINVAL;
		if (fde_parse(fde, &bounds, cie, start, &range, insn, end, &next))
			return -EINVAL;
		return addr - *start < range ? 0 : -ENOENT;
	}
	/* No table: every FDE in turn, to the terminator or the segment's end. */
	for (fde = eh; fde && (uintptr_t)fde >= mod->lo && (uintptr_t)fde < mod->hi; fde = next) {
		int r = fde_parse(fde, &bounds, cie, start, &range, insn, end, &next);

		if (r < 0)
			return r;
		if (!r && addr - *start < range)
			return 0;
	}
	return -ENOENT;
}

/* The register rule that column @reg of @row follows, or NULL. */
static struct reg_rule *col(struct row *row, const struct cie *cie, uint64_t reg)
{
	if (reg == cie->ra_reg)
		return &row->ra;
	if (reg == LS_DW_FP)
		return &row->fp;
	return NULL;
}

/*
 * Run call frame instructions @p..@end from location @loc into @row, up
 * to the row that covers @addr. @init: the CIE's row (DW_CFA_restore).
 * Returns 0, 1 once past @addr (done), or -EINVAL.
 */
static int run(const uint8_t *p, const uint8_t *end, const struct cie *cie, uint64_t *loc,
	       uintptr_t addr, const struct row *init, struct row *row)
{
	struct row saved[STATE_DEPTH];
	struct cur c = { p, end, false };
	unsigned int depth = 0;

	while (c.p < c.end && !c.bad) {
		uint8_t op = (uint8_t)rd_fixed(&c, 1), low = op & 0x3f;
		uint64_t reg = 0, delta = 0;
		struct reg_rule *rr;
		int64_t off;

		switch (op >> 6) {
		case 1:	/* DW_CFA_advance_loc */
			delta = low;
			goto advance;
		case 2:	/* DW_CFA_offset */
			reg = low;
			off = (int64_t)rd_uleb(&c) * cie->data_align;
			goto offset;
		case 3:	/* DW_CFA_restore */
			reg = low;
			goto restore;
		}
		switch (op) {
		case 0x00:	/* DW_CFA_nop */
			break;
		case 0x01:	/* DW_CFA_set_loc */
			*loc = rd_ptr(&c, cie->fde_enc, 0);
			if (*loc > addr)
				return 1;
			break;
		case 0x02: delta = rd_fixed(&c, 1); goto advance;
		case 0x03: delta = rd_fixed(&c, 2); goto advance;
		case 0x04: delta = rd_fixed(&c, 4); goto advance;
		case 0x05:	/* DW_CFA_offset_extended */
			reg = rd_uleb(&c);
			off = (int64_t)rd_uleb(&c) * cie->data_align;
			goto offset;
		case 0x06:	/* DW_CFA_restore_extended */
			reg = rd_uleb(&c);
			goto restore;
		case 0x07:	/* DW_CFA_undefined */
		case 0x08:	/* DW_CFA_same_value */
			rr = col(row, cie, rd_uleb(&c));
			if (rr)
				*rr = (struct reg_rule){ .how = op == 0x07 ? R_UNDEF : R_SAME };
			break;
		case 0x09:	/* DW_CFA_register */
			rr = col(row, cie, rd_uleb(&c));
			reg = rd_uleb(&c);
			if (rr)
				*rr = (struct reg_rule){ .how = R_REGISTER, .reg = (uint32_t)reg };
			break;
		case 0x0a:	/* DW_CFA_remember_state */
			if (depth == STATE_DEPTH)
				return -EINVAL;
			saved[depth++] = *row;
			break;
		case 0x0b:	/* DW_CFA_restore_state: the CFA too, as GCC's epilogues expect */
			if (!depth)
				return -EINVAL;
			*row = saved[--depth];
			break;
		case 0x0c:	/* DW_CFA_def_cfa */
			row->cfa_is_expr = false;
			row->cfa_reg = rd_uleb(&c);
			row->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case 0x0d:	/* DW_CFA_def_cfa_register */
			row->cfa_is_expr = false;
			row->cfa_reg = rd_uleb(&c);
			break;
		case 0x0e:	/* DW_CFA_def_cfa_offset */
			row->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case 0x0f:	/* DW_CFA_def_cfa_expression */
			row->cfa_is_expr = true;
			row->cfa_len = rd_uleb(&c);
			row->cfa_expr = c.p;
			if (c.bad || row->cfa_len > (uint64_t)(c.end - c.p))
				return -EINVAL;
			c.p += row->cfa_len;
			break;
		case 0x10:	/* DW_CFA_expression */
		case 0x16: {	/* DW_CFA_val_expression */
			struct reg_rule e = { .how = op == 0x10 ? R_EXPR : R_VAL_EXPR };

			rr = col(row, cie, rd_uleb(&c));
			e.len = rd_uleb(&c);
			e.expr = c.p;
			if (c.bad || e.len > (uint64_t)(c.end - c.p))
				return -EINVAL;
			c.p += e.len;
			if (rr)
				*rr = e;
			break;
		}
		case 0x11:	/* DW_CFA_offset_extended_sf */
			reg = rd_uleb(&c);
			off = rd_sleb(&c) * cie->data_align;
			goto offset;
		case 0x12:	/* DW_CFA_def_cfa_sf */
			row->cfa_is_expr = false;
			row->cfa_reg = rd_uleb(&c);
			row->cfa_off = rd_sleb(&c) * cie->data_align;
			break;
		case 0x13:	/* DW_CFA_def_cfa_offset_sf */
			row->cfa_off = rd_sleb(&c) * cie->data_align;
			break;
		case 0x14:	/* DW_CFA_val_offset */
		case 0x15:	/* DW_CFA_val_offset_sf */
			rr = col(row, cie, rd_uleb(&c));
			off = op == 0x14 ? (int64_t)rd_uleb(&c) * cie->data_align :
					   rd_sleb(&c) * cie->data_align;
			if (rr)
				*rr = (struct reg_rule){ .how = R_VAL_OFFSET, .off = off };
			break;
		case 0x2d:	/* DW_CFA_AARCH64_negate_ra_state (SPARC's window_save) */
#if defined(__aarch64__)
			break;	/* return addresses are stripped of their PAC always */
#else
			return -EINVAL;
#endif
		case 0x2e:	/* DW_CFA_GNU_args_size */
			rd_uleb(&c);
			break;
		case 0x2f:	/* DW_CFA_GNU_negative_offset_extended */
			reg = rd_uleb(&c);
			off = -(int64_t)rd_uleb(&c) * cie->data_align;
			goto offset;
		default:
			return -EINVAL;
		}
		continue;
advance:
		*loc += delta * cie->code_align;
		if (*loc > addr)
			return 1;
		continue;
offset:
		rr = col(row, cie, reg);
		if (rr)
			*rr = (struct reg_rule){ .how = R_OFFSET, .off = off };
		continue;
restore:
		rr = col(row, cie, reg);
		if (rr)
			*rr = rr == &row->ra ? init->ra : init->fp;
		continue;
	}
	return c.bad ? -EINVAL : 0;
}

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

/* @row as the walk's rule; LS_RULE_BAD where a part of it is not followed. */
static void compile(const struct row *row, uintptr_t pc, bool signal, struct ls_rule *r)
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

int ehframe__rule(const struct ls_module *mod, uintptr_t addr, uintptr_t pc,
		  struct ls_rule *r)
{
	struct row init = { .ra = { .how = R_SAME }, .fp = { .how = R_SAME } }, row;
	const uint8_t *insn, *end;
	struct cie cie;
	uint64_t loc = 0;
	int err;

	err = fde_find(mod, addr, &cie, &insn, &end, &loc);
	if (err)
		return err;
	init.cfa_reg = LS_DW_SP;
	err = run(cie.insn, cie.end, &cie, &loc, UINTPTR_MAX, &init, &init);
	if (err < 0)
		return err;
	row = init;
	err = run(insn, end, &cie, &loc, addr, &init, &row);
	if (err < 0)
		return err;
	compile(&row, pc, cie.signal, r);
	return 0;
}

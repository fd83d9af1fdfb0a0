// SPDX-License-Identifier: MIT
/*
 * ehframe_cfa.c - the call frame instructions of a CIE and an FDE run up
 * to an address (see ehframe_int.h): DWARF 5's DW_CFA_* (section 6.4.2)
 * and GNU's extensions (DW_CFA_GNU_args_size, _negative_offset_extended;
 * aarch64's negate_ra_state), building the row of the CFA and of the two
 * registers the walk follows (the return address column, the frame
 * pointer). Columns of other registers are read past, their rules not
 * kept; remember/restore state nests STATE_DEPTH deep. Bounded reads; an
 * instruction not known ends in -EINVAL.
 */
#include <errno.h>

#include "ehframe_int.h"

/* Remembered rows (DW_CFA_remember_state) a program may nest. */
#define STATE_DEPTH 8

/* The register rule that column @reg of @row follows, or NULL. */
static struct reg_rule *col(struct row *row, const struct cie *cie, uint64_t reg)
{
	if (reg == cie->ra_reg)
		return &row->ra;
	if (reg == LS_DW_FP)
		return &row->fp;
	return NULL;
}

int ehframe_cfa__run(const uint8_t *p, const uint8_t *end, const struct cie *cie,
		     uint64_t *loc, uintptr_t addr, const struct row *init, struct row *row)
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

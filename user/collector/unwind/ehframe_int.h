/* SPDX-License-Identifier: MIT */
/*
 * ehframe_int.h - what the three parts of the collector's CFI reader
 * share (ehframe.h is their interface): a bounded reader of .eh_frame's
 * fields and pointer encodings (the LSB's "Exception Frames", DW_EH_PE_*),
 * a CIE as ehframe.c parses it, and the row of unwind rules the call frame
 * instructions build (ehframe_cfa.c) and the compiler turns into a
 * struct ls_rule (ehframe_expr.c). Internal to user/collector's unwinder.
 */
#ifndef HEAPSNOOP_COLLECTOR_EHFRAME_INT_H
#define HEAPSNOOP_COLLECTOR_EHFRAME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* A bounded reader over [p, end). */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static inline uint64_t rd_fixed(struct cur *c, unsigned int n)
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

static inline uint64_t rd_uleb(struct cur *c)
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

static inline int64_t rd_sleb(struct cur *c)
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
static inline uint64_t rd_ptr(struct cur *c, uint8_t enc, uintptr_t data)
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

/*
 * Run call frame instructions @p..@end from location *@loc into @row, up
 * to the row that covers @addr (DWARF 5, 6.4.2; ehframe_cfa.c). @init:
 * the CIE's row (DW_CFA_restore). Returns 0, 1 once past @addr (done), or
 * -EINVAL for an instruction not known or malformed.
 */
int ehframe_cfa__run(const uint8_t *p, const uint8_t *end, const struct cie *cie,
		     uint64_t *loc, uintptr_t addr, const struct row *init, struct row *row);

/*
 * @row as the walk's rule at @pc (ehframe_expr.c): DWARF expressions
 * reduced where their value is [*](sp | fp | CFA + constant); @signal:
 * the CIE's "S". LS_RULE_BAD where a part of it is not followed.
 */
void ehframe_expr__compile(const struct row *row, uintptr_t pc, bool signal, struct ls_rule *r);

#endif /* HEAPSNOOP_COLLECTOR_EHFRAME_INT_H */

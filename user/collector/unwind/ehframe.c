// SPDX-License-Identifier: MIT
/*
 * ehframe.c - an address's unwind rule from its module's .eh_frame or
 * .debug_frame (see ehframe.h): the FDE that covers it, found by
 * .eh_frame_hdr's binary search table (or a walk of .eh_frame where the
 * header has none) or by modcfi.c's index, its CIE parsed, then both call
 * frame programs run (ehframe_cfa.c) and the row compiled
 * (ehframe_expr.c); and the scan of a section's FDEs that index is built
 * from. The formats: .eh_frame_hdr, CIEs and FDEs as the LSB's "Exception
 * Frames" gives them (DWARF 5's section 6.4.1 with .eh_frame's CIE id,
 * pointer encodings and augmentations); .debug_frame's as DWARF 5 gives
 * them (CIE id all ones, the CIE pointer an offset in the section, 32- or
 * 64-bit). Every read is bounded by the module's segment or the indexed
 * section; an error or a form not handled ends in -EINVAL or LS_RULE_BAD,
 * never a guess.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "ehframe_int.h"

/*
 * A CIE's id, or the CIE pointer of an FDE: 4 bytes, but 8 in
 * .debug_frame's 64-bit format (its length 0xffffffff then 8 bytes).
 */
static uint64_t id_read(struct cur *c, bool debug, bool is64)
{
	return rd_fixed(c, debug && is64 ? 8 : 4);
}

/* Is @id a CIE's: .eh_frame's 0, .debug_frame's all ones. */
static bool id_is_cie(uint64_t id, bool debug, bool is64)
{
	return debug ? id == (is64 ? ~0ull : 0xffffffffull) : !id;
}

static int cie_parse(const uint8_t *p, const struct cur *bounds, bool debug, struct cie *cie)
{
	struct cur c = { p, bounds->end, false };
	const char *aug;
	uint64_t len = rd_fixed(&c, 4);
	const uint8_t *aug_end = NULL;
	bool is64 = len == 0xffffffffu;
	uint8_t version;

	if (is64)
		len = rd_fixed(&c, 8);
	if (c.bad || !len || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	c.end = c.p + len;
	if (!id_is_cie(id_read(&c, debug, is64), debug, is64) || c.bad)
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
 * into *@start and *@range, its instructions into @insn..@end. @debug:
 * .debug_frame's, its addresses plus @bias. Returns 0; 1 for a CIE (not
 * an FDE); -EINVAL. *@next: the entry after it (NULL at .eh_frame's
 * terminator).
 */
static int fde_parse(const uint8_t *p, const struct cur *bounds, bool debug, uintptr_t bias,
		     struct cie *cie, uint64_t *start, uint64_t *range, const uint8_t **insn,
		     const uint8_t **end, const uint8_t **next)
{
	struct cur c = { p, bounds->end, false };
	const uint8_t *id_at, *cie_at;
	uint64_t len = rd_fixed(&c, 4), id;
	bool is64 = len == 0xffffffffu;

	*next = NULL;
	if (is64)
		len = rd_fixed(&c, 8);
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	if (!len)
		return 1;	/* the terminator */
	c.end = c.p + len;
	*next = c.end;
	id_at = c.p;
	id = id_read(&c, debug, is64);
	if (c.bad)
		return -EINVAL;
	if (id_is_cie(id, debug, is64))
		return 1;
	/* .eh_frame's CIE pointer counts back from its own field; .debug_frame's from the section. */
	if (debug) {
		if (id >= (uint64_t)(bounds->end - bounds->p))
			return -EINVAL;
		cie_at = bounds->p + id;
	} else {
		if (id > (uint64_t)(id_at - bounds->p))
			return -EINVAL;
		cie_at = id_at - id;
	}
	if (cie_parse(cie_at, bounds, debug, cie))
		return -EINVAL;
	*start = rd_ptr(&c, cie->fde_enc, 0) + (debug ? bias : 0);
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

/* The FDE for @addr in an index's sorted FDEs (modcfi.c's). */
static int index_find(const struct ls_index *x, uintptr_t addr, struct cie *cie,
		      const uint8_t **insn, const uint8_t **end, uint64_t *start)
{
	struct cur bounds = { x->sec, x->sec + x->len, false };
	uint64_t lo = 0, hi = x->n, range;
	const uint8_t *next;

	if (!x->n || x->fde[0].start > addr)
		return -ENOENT;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (x->fde[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (x->fde[lo].off >= x->len ||
	    fde_parse(x->sec + x->fde[lo].off, &bounds, x->debug, x->bias, cie, start, &range, insn,
		      end, &next))
		return -EINVAL;
	return addr - *start < range ? 0 : -ENOENT;
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

	if (mod->idx)
		return index_find(mod->idx, addr, cie, insn, end, start);
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
		if (fde_parse(fde, &bounds, false, 0, cie, start, &range, insn, end, &next))
			return -EINVAL;
		return addr - *start < range ? 0 : -ENOENT;
	}
	/* No table: every FDE in turn, to the terminator or the segment's end. */
	for (fde = eh; fde && (uintptr_t)fde >= mod->lo && (uintptr_t)fde < mod->hi; fde = next) {
		int r = fde_parse(fde, &bounds, false, 0, cie, start, &range, insn, end, &next);

		if (r < 0)
			return r;
		if (!r && addr - *start < range)
			return 0;
	}
	return -ENOENT;
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
	err = ehframe_cfa__run(cie.insn, cie.end, &cie, &loc, UINTPTR_MAX, &init, &init);
	if (err < 0)
		return err;
	row = init;
	err = ehframe_cfa__run(insn, end, &cie, &loc, addr, &init, &row);
	if (err < 0)
		return err;
	ehframe_expr__compile(&row, pc, cie.signal, r);
	return 0;
}

int64_t ehframe__scan(const uint8_t *sec, uint64_t len, uintptr_t bias, bool debug,
		      struct ls_fde *out, uint64_t max)
{
	struct cur bounds = { sec, sec + len, false };
	const uint8_t *p, *next, *insn, *end;
	uint64_t start, range, n = 0;
	struct cie cie;

	for (p = sec; p && p < bounds.end; p = next) {
		int r = fde_parse(p, &bounds, debug, bias, &cie, &start, &range, &insn, &end, &next);

		if (r < 0)
			return -EINVAL;
		if (r || !range)
			continue;
		if (out && n < max)
			out[n] = (struct ls_fde){ (uintptr_t)start, (uint64_t)(p - sec) };
		n++;
	}
	return (int64_t)n;
}

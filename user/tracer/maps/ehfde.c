// SPDX-License-Identifier: MIT
/*
 * ehfde.c - the address ranges of an ELF file's FDEs (see ehfde.h for
 * the formats).
 */
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <string.h>

#include "maps/ehfde.h"

static int32_t s32_at(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* .eh_frame: the bytes of the section and its address. */
struct ehframe {
	const uint8_t *b;
	size_t size;
	uint64_t addr;
};

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end) {
		uint8_t c = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* A pointer encoded as DW_EH_PE_* @enc says, at *@p (address @at); -1: not one we read. */
static int read_enc(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t at,
		    uint64_t *v)
{
	size_t n;

	switch (enc & 0x0f) {
	case 0x03: case 0x0b: n = 4; break;	/* udata4, sdata4 */
	case 0x00: case 0x04: case 0x0c: n = 8; break;	/* absptr, udata8, sdata8 */
	case 0x02: case 0x0a: n = 2; break;	/* udata2, sdata2 */
	default: return -1;
	}
	if ((size_t)(end - *p) < n)
		return -1;
	if (n == 4)
		*v = (enc & 0x0f) == 0x0b ? (uint64_t)(int64_t)s32_at(*p) : (uint32_t)s32_at(*p);
	else if (n == 2)
		*v = (enc & 0x0f) == 0x0a ? (uint64_t)(int64_t)(int16_t)((*p)[0] | (*p)[1] << 8) :
					    (uint64_t)((*p)[0] | (*p)[1] << 8);
	else
		memcpy(v, *p, 8);
	*p += n;
	if ((enc & 0x70) == 0x10)	/* pcrel */
		*v += at;
	else if (enc & 0x70)
		return -1;
	return 0;
}

/* The FDE encoding of the CIE at @cie ('R' in its augmentation); -1 if none read. */
static int cie_encoding(const struct ehframe *eh, size_t cie, uint8_t *enc)
{
	const uint8_t *p = eh->b + cie, *end = eh->b + eh->size;
	const char *aug;
	uint32_t len;

	if (cie + 9 > eh->size)
		return -1;
	len = (uint32_t)s32_at(p);
	if (len == 0xffffffff || cie + 4 + len > eh->size || s32_at(p + 4) != 0)
		return -1;
	end = p + 4 + len;
	p += 8;
	if (*p++ != 1 && p[-1] != 3)
		return -1;
	aug = (const char *)p;
	p = memchr(p, 0, (size_t)(end - p));
	if (!p || aug[0] != 'z')
		return -1;
	p++;
	uleb(&p, end);			/* code alignment */
	uleb(&p, end);			/* data alignment (signed: its bytes alike) */
	if (eh->b[cie + 8] == 1)
		p++;			/* return address register, a byte in version 1 */
	else
		uleb(&p, end);
	uleb(&p, end);			/* augmentation data's length */
	for (const char *a = aug + 1; *a && p < end; a++) {
		uint64_t skip;

		if (*a == 'R') {
			*enc = *p;
			return 0;
		} else if (*a == 'P') {
			uint8_t penc = *p++;

			if (read_enc(penc & 0x0f, &p, end, 0, &skip))
				return -1;
		} else if (*a == 'L') {
			p++;
		} else if (*a != 'S' && *a != 'B') {
			return -1;
		}
	}
	return -1;
}

/* The range [*@lo, *@hi) of the FDE at address @fde; -1 if it cannot be read. */
static int fde_range(const struct ehframe *eh, uint64_t fde, uint64_t *lo, uint64_t *hi)
{
	size_t off = (size_t)(fde - eh->addr);
	const uint8_t *p, *end;
	uint32_t len, cie_ptr;
	uint64_t range;
	uint8_t enc;

	if (fde < eh->addr || off + 12 > eh->size)
		return -1;
	p = eh->b + off;
	len = (uint32_t)s32_at(p);
	cie_ptr = (uint32_t)s32_at(p + 4);
	if (len == 0xffffffff || off + 4 + len > eh->size || !cie_ptr || cie_ptr > off + 4 ||
	    cie_encoding(eh, off + 4 - cie_ptr, &enc))
		return -1;
	end = p + 4 + len;
	p += 8;
	if (read_enc(enc, &p, end, eh->addr + (uint64_t)(p - eh->b), lo) ||
	    read_enc(enc & 0x0f, &p, end, 0, &range))
		return -1;
	*hi = *lo + range;
	return 0;
}

/* A section's data and header, by name. */
static Elf_Data *section(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}


/* .eh_frame_hdr's table and .eh_frame, or -ENOTSUP. */
struct eh_table {
	struct ehframe eh;
	const uint8_t *h;	/* .eh_frame_hdr's bytes */
	uint64_t haddr;		/* ... and address */
	size_t count;		/* its table's entries */
};

static int eh_table(Elf *elf, struct eh_table *t)
{
	Elf_Data *hdr, *frame;
	GElf_Shdr hsh, fsh;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOTSUP;
	hdr = section(elf, shstrndx, ".eh_frame_hdr", &hsh);
	frame = section(elf, shstrndx, ".eh_frame", &fsh);
	/* version 1, the count udata4, the table DW_EH_PE_datarel | DW_EH_PE_sdata4 */
	if (!hdr || !frame || hdr->d_size < 12 || ((uint8_t *)hdr->d_buf)[0] != 1 ||
	    ((uint8_t *)hdr->d_buf)[2] != 0x03 || ((uint8_t *)hdr->d_buf)[3] != 0x3b)
		return -ENOTSUP;
	t->h = hdr->d_buf;
	t->haddr = hsh.sh_addr;
	t->eh = (struct ehframe){ .b = frame->d_buf, .size = frame->d_size, .addr = fsh.sh_addr };
	t->count = (uint32_t)s32_at(t->h + 8);
	if (12 + t->count * 8 > hdr->d_size)
		return -ENOTSUP;
	return 0;
}

/* Entry @i's initial location and FDE address. */
static uint64_t entry_pc(const struct eh_table *t, size_t i)
{
	return t->haddr + (uint64_t)(int64_t)s32_at(t->h + 12 + i * 8);
}

static uint64_t entry_fde(const struct eh_table *t, size_t i)
{
	return t->haddr + (uint64_t)(int64_t)s32_at(t->h + 16 + i * 8);
}

int eh_fde__covering(Elf *elf, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	struct eh_table t;
	size_t a = 0, b;
	int err = eh_table(elf, &t);

	if (err)
		return err;
	/* The last entry whose initial location is at or below @pc (the table is sorted). */
	b = t.count;
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (entry_pc(&t, m) <= pc)
			a = m + 1;
		else
			b = m;
	}
	if (!a || fde_range(&t.eh, entry_fde(&t, a - 1), lo, hi) || *lo != entry_pc(&t, a - 1) ||
	    pc < *lo || pc >= *hi)
		return -ENOENT;
	return 0;
}

int eh_fde__largest(Elf *elf, uint64_t *lo, uint64_t *hi)
{
	struct eh_table t;
	uint64_t best = 0;
	int err = -ESRCH;

	if (eh_table(elf, &t))
		return -ESRCH;
	for (size_t i = 0; i < t.count; i++) {
		uint64_t l, h;

		if (!fde_range(&t.eh, entry_fde(&t, i), &l, &h) && h - l > best) {
			best = h - l;
			*lo = l;
			*hi = h;
			err = 0;
		}
	}
	return err;
}

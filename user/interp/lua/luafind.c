// SPDX-License-Identifier: MIT
/*
 * luafind.c - a Lua VM in an ELF file (see luafind.h). Which VM: the C
 * API it exports (5.4's lua_resetthread, 5.1's lua_setfenv, LuaJIT's
 * luaJIT_setmode; 5.2's and 5.3's lua_callk without lua_resetthread).
 * The largest FDE: .eh_frame_hdr's table of every FDE (LSB's "Exception
 * Frame Header": version 1, a sorted table of DW_EH_PE_datarel |
 * DW_EH_PE_sdata4 pairs, what every toolchain writes), each FDE's range
 * read from .eh_frame as its CIE's 'R' augmentation encodes it (LSB's
 * "Exception Frames"; libdw gives a row's range, not an FDE's).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/elffile.h"
#include "elfseg.h"
#include "interp/lua/luafind.h"
#include "text.h"

/* Is function @name defined in @ef? Its address and size into @fn if so. */
static bool has(struct elf_file *ef, const char *name, struct elf_func *fn)
{
	struct elf_func tmp;

	return elf_file__find_func(ef, name, fn ? fn : &tmp) == 0;
}

static enum lua_vm which_vm(struct elf_file *ef)
{
	if (has(ef, "luaJIT_setmode", NULL))
		return LUA_VM_JIT;
	if (has(ef, "lua_resetthread", NULL) || has(ef, "lua_closeslot", NULL))
		return LUA_VM_54;
	if (has(ef, "lua_callk", NULL))
		return LUA_VM_NONE;	/* 5.2 or 5.3 */
	if (has(ef, "lua_setfenv", NULL))
		return LUA_VM_51;
	return LUA_VM_NONE;
}

/*
 * Function @name's [lo, hi) in the symbol table of the ELF file at @path
 * (a debug file: its segments have no bytes, so elffile.c's offsets are
 * not asked for).
 */
static int symtab_func(const char *path, const char *name, uint64_t *lo, uint64_t *hi)
{
	Elf_Scn *scn = NULL;
	int fd, err = -ENOENT;
	GElf_Shdr sh;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && err && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_size)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*lo = sym.st_value;
				*hi = sym.st_value + sym.st_size;
				err = 0;
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* The interpreter loop by its symbol in @path's debug file, under @root. */
static int exec_by_symbol(struct elf_file *ef, const char *root, struct lua_vm_info *out)
{
	uint8_t id[64];
	char hex[BUILD_ID_HEX_SIZE], path[4096];
	int n = elf_file__build_id(ef, id, sizeof(id));

	if (n < 2 || out->vm == LUA_VM_JIT)
		return -ENOENT;
	build_id_hex(id, n, hex);
	snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	if (symtab_func(path, "luaV_execute", &out->exec_lo, &out->exec_hi))
		return -ENOENT;
	out->exec_by_symbol = true;
	return 0;
}

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

/* The largest FDE's range, from .eh_frame_hdr's table of FDEs. */
static int exec_by_fde(const char *path, struct lua_vm_info *out)
{
	Elf_Data *hdr, *frame;
	GElf_Shdr hsh, fsh;
	struct ehframe eh;
	size_t shstrndx, count;
	uint64_t best = 0;
	const uint8_t *h;
	int fd, err = -ESRCH;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	hdr = section(elf, shstrndx, ".eh_frame_hdr", &hsh);
	frame = section(elf, shstrndx, ".eh_frame", &fsh);
	/* version 1, the count udata4, the table DW_EH_PE_datarel | DW_EH_PE_sdata4 */
	if (!hdr || !frame || hdr->d_size < 12 || ((uint8_t *)hdr->d_buf)[0] != 1 ||
	    ((uint8_t *)hdr->d_buf)[2] != 0x03 || ((uint8_t *)hdr->d_buf)[3] != 0x3b)
		goto out;
	h = hdr->d_buf;
	eh = (struct ehframe){ .b = frame->d_buf, .size = frame->d_size, .addr = fsh.sh_addr };
	count = (uint32_t)s32_at(h + 8);
	if (12 + count * 8 > hdr->d_size)
		goto out;
	for (size_t i = 0; i < count; i++) {
		uint64_t fde = hsh.sh_addr + (uint64_t)(int64_t)s32_at(h + 16 + i * 8), lo, hi;

		if (!fde_range(&eh, fde, &lo, &hi) && hi - lo > best) {
			best = hi - lo;
			out->exec_lo = lo;
			out->exec_hi = hi;
			err = 0;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* Link-time @lo, @hi as file offsets into *@olo, *@ohi (both in one segment). */
static int offsets(const struct elf_segments *segs, uint64_t lo, uint64_t hi, uint64_t *olo,
		   uint64_t *ohi)
{
	const struct elf_segment *s = elf_segments__by_vaddr(segs, lo);

	if (!s || hi < lo || hi - s->vaddr > s->filesz)
		return -ERANGE;
	*olo = elf_segment__offset(s, lo);
	*ohi = elf_segment__offset(s, hi);
	return 0;
}

static int to_offsets(const char *path, struct lua_vm_info *out)
{
	struct elf_segments segs = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ENOEXEC;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_segments__read(elf, &segs)) {
		err = offsets(&segs, out->exec_lo, out->exec_hi, &out->exec_off_lo,
			      &out->exec_off_hi);
		if (!err && out->resume_hi)
			err = offsets(&segs, out->resume_lo, out->resume_hi, &out->resume_off_lo,
				      &out->resume_off_hi);
		elf_segments__free(&segs);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int lua_find__file(const char *path, const char *root, struct lua_vm_info *out)
{
	struct elf_file *ef;
	struct elf_func fn;
	int err;

	memset(out, 0, sizeof(*out));
	err = elf_file__open(path, &ef);
	if (err)
		return err;
	if (!has(ef, "lua_newstate", &fn)) {
		elf_file__close(ef);
		return -ENOENT;
	}
	out->newstate = fn.offset;
	if (has(ef, "luaL_newstate", &fn))
		out->lnewstate = fn.offset;
	out->vm = which_vm(ef);
	if (out->vm == LUA_VM_NONE) {
		elf_file__close(ef);
		return -ENOTSUP;
	}
	if (has(ef, "lua_resume", &fn)) {
		out->resume_lo = fn.addr;
		out->resume_hi = fn.addr + fn.size;
	}
	err = exec_by_symbol(ef, root, out);
	elf_file__close(ef);
	if (err)
		err = exec_by_fde(path, out);
	return err ? err : to_offsets(path, out);
}

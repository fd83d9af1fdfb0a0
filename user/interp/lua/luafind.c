// SPDX-License-Identifier: MIT
/*
 * luafind.c - a Lua VM in an ELF file (see luafind.h). Which VM: the C
 * API it exports (5.4's lua_resetthread, 5.1's lua_setfenv, LuaJIT's
 * luaJIT_setmode; 5.2's and 5.3's lua_callk without lua_resetthread).
 * The largest FDE: maps/ehfde.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/ehfde.h"
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

/* The largest FDE's range, from .eh_frame_hdr's table of FDEs. */
static int exec_by_fde(const char *path, struct lua_vm_info *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ESRCH;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		err = eh_fde__largest(elf, &out->exec_lo, &out->exec_hi);
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

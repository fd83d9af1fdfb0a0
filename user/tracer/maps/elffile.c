// SPDX-License-Identifier: MIT
/*
 * elffile.c - ELF symbol, build-ID and file-offset look-ups through libelf
 * (elfutils). See elffile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfseg.h"
#include "arch/tracer_arch.h"
#include "elffile.h"

struct elf_file {
	int fd;
	Elf *elf;
	struct elf_segments segs;	/* none if unreadable: no function found */
};

int elf_file__open(const char *path, struct elf_file **out)
{
	struct elf_file *ef;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0) {
		int err = -errno;

		free(ef);
		return err;
	}
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		elf_file__close(ef);
		return -ENOEXEC;
	}
	if (elf_segments__read(ef->elf, &ef->segs) == -ENOMEM) {
		elf_file__close(ef);
		return -ENOMEM;
	}
	*out = ef;
	return 0;
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	elf_segments__free(&ef->segs);
	free(ef);
}

static int find_in_symtab(Elf *elf, Elf_Scn *scn, const char *name, bool object,
			  struct elf_func *fn)
{
	GElf_Shdr sh;
	Elf_Data *data;
	int best = -ENOENT;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -ENOENT;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *s;
		int type;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (object ? type != STT_OBJECT : type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		s = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!s || strcmp(s, name))
			continue;
		fn->addr = sym.st_value;
		fn->size = sym.st_size;
		fn->ifunc = type == STT_GNU_IFUNC;
		best = 0;
		/* A global definition wins over a local or weak one. */
		if (GELF_ST_BIND(sym.st_info) == STB_GLOBAL)
			break;
	}
	return best;
}

/* @name in .dynsym, then .symtab; 0 or -ENOENT. */
static int find_sym(struct elf_file *ef, const char *name, bool object, struct elf_func *fn)
{
	static const Elf64_Word types[] = { SHT_DYNSYM, SHT_SYMTAB };

	for (size_t t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(ef->elf, scn)) != NULL) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t])
				continue;
			if (find_in_symtab(ef->elf, scn, name, object, fn) == 0)
				return 0;
		}
	}
	return -ENOENT;
}

int elf_file__find_func(struct elf_file *ef, const char *name, struct elf_func *fn)
{
	const struct elf_segment *seg;
	int err = find_sym(ef, name, false, fn);

	if (err)
		return err;
	seg = elf_segments__by_vaddr(&ef->segs, fn->addr);
	if (!seg)
		return -ERANGE;
	fn->offset = elf_segment__offset(seg, fn->addr);
	return 0;
}

int elf_file__find_object(struct elf_file *ef, const char *name, struct elf_func *obj)
{
	int err = find_sym(ef, name, true, obj);

	obj->offset = 0;
	return err;
}

int elf_file__read_addr(struct elf_file *ef, uint64_t addr, void *buf, size_t len)
{
	const struct elf_segment *seg = elf_segments__by_vaddr(&ef->segs, addr);
	ssize_t n;

	/* Past the segment's bytes in the file: .bss, not in the file. */
	if (!seg || addr + len > seg->vaddr + seg->filesz || addr + len < addr)
		return -ERANGE;
	n = elf_file__pread(ef, buf, len, elf_segment__offset(seg, addr));
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

int elf_file__offset_of(struct elf_file *ef, uint64_t addr, uint64_t *off)
{
	const struct elf_segment *seg = elf_segments__by_vaddr(&ef->segs, addr);

	if (!seg)
		return -ERANGE;
	*off = elf_segment__offset(seg, addr);
	return 0;
}

Elf *elf_file__elf(struct elf_file *ef)
{
	return ef->elf;
}

ssize_t elf_file__pread(struct elf_file *ef, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(ef->fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

int elf_file__build_id(struct elf_file *ef, uint8_t *id, size_t cap)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ef->elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + name_off, "GNU", 4))
				continue;
			if (nh.n_descsz > cap)
				return -ENOSPC;
			memcpy(id, (char *)data->d_buf + desc_off, nh.n_descsz);
			return (int)nh.n_descsz;
		}
	}
	return 0;
}

bool elf_file__is_dynamic(struct elf_file *ef)
{
	size_t n;

	if (elf_getphdrnum(ef->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ef->elf, (int)i, &ph) &&
		    (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC))
			return true;
	}
	return false;
}

bool elf_file__is_native(struct elf_file *ef)
{
	GElf_Ehdr eh;

	return gelf_getehdr(ef->elf, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	       eh.e_machine == ARCH_ELF_MACHINE;
}

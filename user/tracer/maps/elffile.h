/* SPDX-License-Identifier: MIT */
/*
 * elffile.h - what the loader needs from an ELF file, through libelf:
 * function symbols as (address, size, file offset), the bytes at a file
 * offset, the GNU build ID, and whether it is dynamically linked.
 */
#ifndef HEAPSNOOP_ELFFILE_H
#define HEAPSNOOP_ELFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include <sys/types.h>

#include "text.h"


struct elf_file;

struct elf_func {
	uint64_t addr;		/* st_value: link-time virtual address */
	uint64_t size;		/* st_size, bytes */
	uint64_t offset;	/* file offset of addr (what a uprobe takes) */
	bool ifunc;		/* STT_GNU_IFUNC: addr is the resolver */
};

/* Open @path; returns 0 or -errno (-ENOEXEC: not an ELF file). */
int elf_file__open(const char *path, struct elf_file **out);
void elf_file__close(struct elf_file *ef);

/*
 * Find the defined function @name in .dynsym, then .symtab.
 * Returns 0, -ENOENT if absent, -ERANGE if its address is in no PT_LOAD.
 */
int elf_file__find_func(struct elf_file *ef, const char *name, struct elf_func *fn);

/*
 * Find the defined data object @name (STT_OBJECT: its address and size;
 * no offset) in .dynsym, then .symtab. Returns 0 or -ENOENT.
 */
int elf_file__find_object(struct elf_file *ef, const char *name, struct elf_func *obj);

/*
 * Read @len bytes at link-time address @addr from the file (what the
 * image holds there before it runs: initialised data, code). Returns 0,
 * -ERANGE (in no PT_LOAD's bytes of the file: .bss) or -errno.
 */
int elf_file__read_addr(struct elf_file *ef, uint64_t addr, void *buf, size_t len);

/* The file offset of link-time address @addr (a uprobe's): 0 or -ERANGE. */
int elf_file__offset_of(struct elf_file *ef, uint64_t addr, uint64_t *off);

/* libelf's handle of the file (libdw's CFI, section reads). */
Elf *elf_file__elf(struct elf_file *ef);

/* Read @len bytes at file offset @off; returns bytes read or -errno. */
ssize_t elf_file__pread(struct elf_file *ef, void *buf, size_t len, uint64_t off);

/* The NT_GNU_BUILD_ID note into @id; returns its length, 0 if none. */
int elf_file__build_id(struct elf_file *ef, uint8_t *id, size_t cap);

/* True if the file has a PT_INTERP or PT_DYNAMIC program header. */
bool elf_file__is_dynamic(struct elf_file *ef);

/*
 * Whether the file is 64-bit code of the machine heapsnoop was built for
 * (ELFCLASS64 and arch/tracer_arch.h's ARCH_ELF_MACHINE: EM_X86_64 or
 * EM_AARCH64), the only kind it traces: a 32-bit (i386, x32, arm) program
 * passes its arguments and keeps its stack otherwise, and was traced as
 * empty.
 */
bool elf_file__is_native(struct elf_file *ef);

#endif /* HEAPSNOOP_ELFFILE_H */

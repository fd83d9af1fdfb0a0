/* SPDX-License-Identifier: MIT */
/*
 * elfseg.h - an ELF file's PT_LOAD segments and the translation between
 * a file offset (what a mapping and a uprobe give) and an ELF virtual
 * address (what symbols, line tables and CFI use), through the segment
 * that holds it. docs/OUTPUT.md: `addr - start + off - p_offset + p_vaddr`.
 */
#ifndef HEAPSNOOP_ELFSEG_H
#define HEAPSNOOP_ELFSEG_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct elf_segment {
	uint64_t offset;	/* p_offset: file offset of the segment */
	uint64_t vaddr;		/* p_vaddr: its link-time address */
	uint64_t filesz;	/* p_filesz: bytes of it in the file */
};

struct elf_segments {
	struct elf_segment *v;	/* PT_LOAD only, in program header order */
	size_t n;
};

/*
 * Read the PT_LOAD program headers of @elf into @segs (free with
 * elf_segments__free). Returns 0; -ENOENT if @elf has no readable
 * program headers; -ENOMEM.
 */
int elf_segments__read(Elf *elf, struct elf_segments *segs);
/* Free @segs' array and empty it (reading it again is fine). */
void elf_segments__free(struct elf_segments *segs);

/* The segment whose file bytes hold file offset @off, or NULL. */
const struct elf_segment *elf_segments__by_offset(const struct elf_segments *segs, uint64_t off);

/* The segment whose file bytes hold virtual address @vaddr, or NULL. */
const struct elf_segment *elf_segments__by_vaddr(const struct elf_segments *segs, uint64_t vaddr);

/* File offset @off as an address of segment @s (@off may lie past it). */
static inline uint64_t elf_segment__vaddr(const struct elf_segment *s, uint64_t off)
{
	return off - s->offset + s->vaddr;
}

/* Virtual address @vaddr of segment @s as a file offset. */
static inline uint64_t elf_segment__offset(const struct elf_segment *s, uint64_t vaddr)
{
	return vaddr - s->vaddr + s->offset;
}

#endif /* HEAPSNOOP_ELFSEG_H */

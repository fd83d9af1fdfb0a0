// SPDX-License-Identifier: MIT
/* elfseg.c - PT_LOAD segments and offset <-> address (see elfseg.h). */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>

#include "elfseg.h"

int elf_segments__read(Elf *elf, struct elf_segments *segs)
{
	size_t n;

	segs->v = NULL;
	segs->n = 0;
	if (elf_getphdrnum(elf, &n))
		return -ENOENT;
	segs->v = calloc(n ? n : 1, sizeof(*segs->v));
	if (!segs->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		segs->v[segs->n++] = (struct elf_segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	return 0;
}

void elf_segments__free(struct elf_segments *segs)
{
	free(segs->v);
	segs->v = NULL;
	segs->n = 0;
}

const struct elf_segment *elf_segments__by_offset(const struct elf_segments *segs, uint64_t off)
{
	for (size_t i = 0; i < segs->n; i++)
		if (off >= segs->v[i].offset && off - segs->v[i].offset < segs->v[i].filesz)
			return &segs->v[i];
	return NULL;
}

const struct elf_segment *elf_segments__by_vaddr(const struct elf_segments *segs, uint64_t vaddr)
{
	for (size_t i = 0; i < segs->n; i++)
		if (vaddr >= segs->v[i].vaddr && vaddr - segs->v[i].vaddr < segs->v[i].filesz)
			return &segs->v[i];
	return NULL;
}

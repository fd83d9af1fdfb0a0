/* SPDX-License-Identifier: MIT */
/*
 * ehfde.h - the address ranges of an ELF file's FDEs (its functions' and
 * their split-off parts', as the compiler described them for unwinding):
 * .eh_frame_hdr's sorted table of every FDE (LSB's "Exception Frame
 * Header": version 1, DW_EH_PE_datarel | DW_EH_PE_sdata4 pairs, what
 * every toolchain writes), each FDE's range read from .eh_frame as its
 * CIE's 'R' augmentation encodes it (LSB's "Exception Frames"). libdw
 * gives a CFI row's range, not an FDE's: a function's .cold part of
 * 84 KiB (forky's python3.14) is hundreds of rows.
 */
#ifndef HEAPSNOOP_EHFDE_H
#define HEAPSNOOP_EHFDE_H

#include <gelf.h>
#include <stdint.h>

/*
 * The range [*@lo, *@hi) (link-time addresses) of @elf's FDE that covers
 * @pc. Returns 0; -ENOENT if none covers it; -ENOTSUP if @elf has no
 * .eh_frame_hdr of that form.
 */
int eh_fde__covering(Elf *elf, uint64_t pc, uint64_t *lo, uint64_t *hi);

/* The range of @elf's largest FDE, as eh_fde__covering() (-ESRCH: none read). */
int eh_fde__largest(Elf *elf, uint64_t *lo, uint64_t *hi);

#endif /* HEAPSNOOP_EHFDE_H */

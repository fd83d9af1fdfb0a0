/* SPDX-License-Identifier: MIT */
/*
 * ltmods.h - the live table's module records (include/heapsnoop/
 * livetable.h, struct lt_module): each executable segment the loader
 * has mapped, appended before any stack whose frames may lie in it
 * (ltstacks.c asks before it adds one), so that a dump made after the
 * process died has its `map` lines without /proc/PID/maps; one no longer
 * loaded marked gone (another may be mapped at its addresses).
 */
#ifndef HEAPSNOOP_COLLECTOR_LTMODS_H
#define HEAPSNOOP_COLLECTOR_LTMODS_H

#include <stdint.h>

/* The private list made (the first look is the first ltmods__refresh()). Returns 0 or -ENOMEM. */
int ltmods__init(void);

/*
 * The modules loaded since the last look recorded, those unloaded marked
 * gone: the loader's counts of loads and unloads (dl_iterate_phdr's
 * dlpi_adds, dlpi_subs) read, the rest only if they moved. It may take
 * the loader's lock and allocate (the caller is marked inside the
 * collector); inside a section. A record with no room is counted
 * (lost_modules).
 */
void ltmods__refresh(void);

/*
 * In a fork child: the module lock made anew (it is taken inside
 * sections only, so no thread held it at the fork).
 */
void ltmods__forked(void);

/* Module records made so far (the bits ltmods__gone() fills). */
unsigned int ltmods__count(void);

/*
 * The module records' gone flags into the bitmap @bits (@n bits), at the
 * fork; put back into a fork child's copy of the table (the parent may
 * mark one gone while the child copies).
 */
void ltmods__gone(uint64_t *bits, unsigned int n);
void ltmods__restore_gone(const uint64_t *bits, unsigned int n);

#endif /* HEAPSNOOP_COLLECTOR_LTMODS_H */

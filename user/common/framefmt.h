/* SPDX-License-Identifier: MIT */
/*
 * framefmt.h - how both programs show one symbolized frame of a stack
 * (heapsnoop's -s summary, heapdecode's -s and --report; docs/OUTPUT.md,
 * "What heapdecode writes"):
 *
 *   #K 0xADDR name (inlined) file:line          one per inlined function,
 *   #K 0xADDR function+0xOFF (module) file:line   innermost first, then
 *
 * as eu-addr2line -i shows them; a frame that cannot be named says where
 * in which file it is, and why not named:
 *
 *   #K 0xADDR module+0xOFF [module file not found]
 *
 * (0xOFF: framefmt__module_off). A frame that is not native code has its
 * kind where a native one has its module (frametab.h):
 *
 *   #K 0xADDR function [python] file:line         an interpreter's frame
 *   #K 0xADDR name [jit+0xOFF]                    JIT code
 */
#ifndef HEAPSNOOP_FRAMEFMT_H
#define HEAPSNOOP_FRAMEFMT_H

#include <stdint.h>
#include <stdio.h>

#include "symbolizer.h"

/*
 * Write frame @k of a stack, return address @addr, as symbolized in @f,
 * each line starting with @indent; @f NULL (no symbolizer, or it failed):
 * the address alone.
 */
void framefmt__write(FILE *out, const char *indent, uint32_t k, uint64_t addr,
		     const struct sym_frame *f);

/*
 * Where in its module a frame that was not named is: its ELF address
 * when the module was opened (no symbol covers it), else its offset in
 * the module's file (not found, not the traced one), which is the ELF
 * address too in most programs and libraries (addr2line -e MODULE).
 */
uint64_t framefmt__module_off(const struct sym_frame *f);

/*
 * The mark of an incomplete stack (stacks.h's STACK_* @flags; 0: none), as
 * every report shows it: "stack truncated" (deeper than kept or copied),
 * "stack unreadable past here" (a frame not recovered), "interpreter
 * frames out of place" (not matched to their native frames), those that
 * apply joined by ", ". Returns a static string, "" for a complete stack.
 */
const char *framefmt__cut(uint32_t flags);

#endif /* HEAPSNOOP_FRAMEFMT_H */

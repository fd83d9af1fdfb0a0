// SPDX-License-Identifier: MIT
/* cfiregs_arm64.c - AArch64's DWARF register tables (see unwind/cfiregs.h). */
#include "unwind/cfiregs.h"

const int cfi_rule_regs[CFI_RULE_REGS] = {
	CFI_REG_RA, CFI_REG_FP, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
};

/*
 * The call site (pc) stands in x30's column, the return-address column,
 * for the first frame: the caller's own x30 was saved by it before it
 * called the allocator, and its CFI says where.
 */
const int arch_ureg_dwarf[HS_UREG__MAX] = {
	[HS_UREG_IP] = CFI_REG_RA, [HS_UREG_SP] = CFI_REG_SP, [HS_UREG_FP] = CFI_REG_FP,
	[HS_UREG_X19] = 19, [HS_UREG_X20] = 20, [HS_UREG_X21] = 21, [HS_UREG_X22] = 22,
	[HS_UREG_X23] = 23, [HS_UREG_X24] = 24, [HS_UREG_X25] = 25, [HS_UREG_X26] = 26,
	[HS_UREG_X27] = 27, [HS_UREG_X28] = 28,
};

// SPDX-License-Identifier: MIT
/* cfiregs_x86.c - x86-64's DWARF register tables (see unwind/cfiregs.h). */
#include "unwind/cfiregs.h"

const int cfi_rule_regs[CFI_RULE_REGS] = {
	CFI_REG_RA, CFI_REG_FP, 3 /* %rbx */, 12, 13, 14, 15,
};

/* The call site stands in the return-address column of the first frame. */
const int arch_ureg_dwarf[HS_UREG__MAX] = {
	[HS_UREG_IP] = CFI_REG_RA, [HS_UREG_SP] = CFI_REG_SP,
	[HS_UREG_BP] = CFI_REG_FP, [HS_UREG_BX] = 3,
	[HS_UREG_R12] = 12, [HS_UREG_R13] = 13, [HS_UREG_R14] = 14, [HS_UREG_R15] = 15,
};

// SPDX-License-Identifier: MIT
/*
 * startup.c - the firmware's vector table and reset handler on a
 * Cortex-M3 (ARMv7-M Architecture Reference Manual, B1.5: the table's
 * first word is the initial stack pointer, the second the reset vector),
 * and its exit through Arm semihosting (SYS_EXIT, "Semihosting for
 * AArch32 and AArch64", 6.5), which qemu-system-arm -semihosting-config
 * enable=on turns into its own exit status. Without semihosting the BKPT
 * is a HardFault, and the firmware waits there for the test to stop it.
 */
#include <stdint.h>
#include <string.h>

#include "fw.h"

extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start, __bss_end;

int main(void);

static volatile int exiting;	/* fw_exit() was called: a HardFault now is its BKPT */

/* Semihosting's SYS_EXIT (0x18) with ADP_Stopped_ApplicationExit (0x20026,
 * qemu's status 0) or ADP_Stopped_RunTimeErrorUnknown (0x20023, status 1). */
void fw_exit(int status)
{
	register uint32_t op __asm__("r0") = 0x18;
	register uint32_t why __asm__("r1") = status ? 0x20023 : 0x20026;

	exiting = 1;
	__asm__ volatile("bkpt 0xab" : "+r"(op) : "r"(why) : "memory");
	for (;;)
		__asm__ volatile("wfi");
}

/*
 * Every fault, and an interrupt nobody enabled: say so, then stop. The
 * exit's own BKPT faults when qemu has no semihosting: then only wait (a
 * second BKPT here would lock the core up, and qemu aborts on that).
 */
static void fault_handler(void)
{
	if (exiting) {
		uart_puts("fw: halted (no semihosting to exit through)\n");
		for (;;)
			__asm__ volatile("wfi");
	}
	uart_puts("fw: fault\n");
	fw_exit(1);
}

/*
 * Alone in .text.reset (the linker script's __reset_start/__reset_end):
 * backtrace.c ends a stack at its call of main().
 */
__attribute__((section(".text.reset"), noreturn)) void reset_handler(void)
{
	memcpy(&__data_start, &__data_load, (size_t)((char *)&__data_end - (char *)&__data_start));
	memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
	fw_exit(main());
}

/* The core's 16 exceptions; the board's interrupts are never enabled. */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
	(void (*)(void))&__stack_top,
	reset_handler,
	fault_handler,	/* NMI */
	fault_handler,	/* HardFault */
	fault_handler,	/* MemManage */
	fault_handler,	/* BusFault */
	fault_handler,	/* UsageFault */
	0, 0, 0, 0,
	fault_handler,	/* SVCall */
	fault_handler,	/* DebugMonitor */
	0,
	fault_handler,	/* PendSV */
	fault_handler,	/* SysTick */
};

// SPDX-License-Identifier: MIT
/*
 * uart.c - a polled driver for UART0 of the MPS2 board, ARM's CMSDK APB
 * UART (Cortex-M System Design Kit TRM, 4.3: DATA 0x00, STATE 0x04 bit 0
 * TX buffer full, CTRL 0x08 bit 0 TX enable, BAUDDIV 0x10, at least 16),
 * at 0x40004000 on AN385; qemu -nographic puts it on standard output.
 */
#include <stddef.h>
#include <stdint.h>

#include "fw.h"

#define UART0		0x40004000u
#define UART_DATA	(*(volatile uint32_t *)(UART0 + 0x00))
#define UART_STATE	(*(volatile uint32_t *)(UART0 + 0x04))
#define UART_CTRL	(*(volatile uint32_t *)(UART0 + 0x08))
#define UART_BAUDDIV	(*(volatile uint32_t *)(UART0 + 0x10))
#define STATE_TX_FULL	(1u << 0)
#define CTRL_TX_EN	(1u << 0)

void uart_init(void)
{
	UART_BAUDDIV = 16;
	UART_CTRL = CTRL_TX_EN;
}

void uart_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		while (UART_STATE & STATE_TX_FULL)
			;
		UART_DATA = (uint8_t)s[i];
	}
}

void uart_puts(const char *s)
{
	while (*s)
		uart_write(s++, 1);
}

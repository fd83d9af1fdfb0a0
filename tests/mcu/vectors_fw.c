// SPDX-License-Identifier: MIT
/*
 * vectors_fw.c - the format's test vectors (tests/data/vectors.tsv, linked
 * in whole) checked by the codec on the Cortex-M3 itself, a second
 * firmware beside examples/mcu's (its startup and UART): every record
 * encoded byte for byte as the reference, every token decoded to its
 * frames, 64-bit values included, on a 32-bit core. Says
 * "vectors: N of N exact" (or each failure) and "fw: done" on UART0
 * (tests/mcu/test_mcu.sh), and exits 0 only if all were exact.
 */
#include "fw.h"
#include "vectors_check.h"

/* The file, as it is (VECTORS_TSV: its absolute path, from the Makefile). */
__asm__(".section .rodata.vectors_tsv, \"a\"\n"
	".global vectors_tsv\n"
	"vectors_tsv:\n"
	".incbin \"" VECTORS_TSV "\"\n"
	".global vectors_tsv_end\n"
	"vectors_tsv_end:\n"
	".previous\n");
extern const char vectors_tsv[], vectors_tsv_end[];

static void say(void *arg, const char *text)
{
	(void)arg;
	uart_puts("fw: FAIL ");
	uart_puts(text);
	uart_puts("\n");
}

/* @v in decimal. */
static void put_u(unsigned int v)
{
	char d[10];
	int n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		uart_write(&d[--n], 1);
}

int main(void)
{
	unsigned int lines, bad;

	uart_init();
	bad = vectors_check(vectors_tsv, (size_t)(vectors_tsv_end - vectors_tsv), say, NULL, &lines);
	uart_puts("vectors: ");
	put_u(lines - bad);
	uart_puts(" of ");
	put_u(lines);
	uart_puts(" exact\n");
	uart_puts("fw: done\n");
	return bad || !lines;
}

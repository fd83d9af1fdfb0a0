/* SPDX-License-Identifier: MIT */
/*
 * fw.h - the firmware's pieces (docs/MCU.md): its UART (uart.c), its exit
 * (startup.c), its stack walk (backtrace.c) and its pool allocator with
 * lws-style metadata (pool.c), which main.c uses.
 */
#ifndef FW_H
#define FW_H

#include <stddef.h>
#include <stdint.h>

/* UART0, polled: enable it, then write @n bytes or a string. */
void uart_init(void);
void uart_write(const char *s, size_t n);
void uart_puts(const char *s);

/* Stop qemu through semihosting: @status 0 is its exit status 0, else 1. */
__attribute__((noreturn)) void fw_exit(int status);

/*
 * The return addresses of the calling thread's stack into @frames[@max],
 * innermost first, the first @skip frames above fw_backtrace()'s caller
 * left out (fw_backtrace's own is never kept); walked with the EHABI
 * unwind tables (.ARM.exidx) to reset_handler's call of main(). Returns
 * the frames kept; *@cut: 0 when the walk reached reset_handler,
 * HS_AM_CUT_DEPTH when @max ran out first, HS_AM_CUT_UNREADABLE when a
 * frame had no unwind entry (code without tables, an exception frame).
 */
uint32_t fw_backtrace(uint64_t *frames, uint32_t max, uint32_t skip, uint32_t *cut);

/*
 * The pool: POOL_BLOCKS blocks of POOL_BLOCK bytes, each holding one
 * allocation and its record in front of it. pool_alloc() returns NULL
 * when the pool is empty or @size and its record do not fit a block.
 */
#define POOL_BLOCK	256
#define POOL_BLOCKS	48
int pool_init(void);
void *pool_alloc(size_t size);
void pool_free(void *p);
/* The live blocks as heapsnoop's dump lines on the UART (hs_am__dump_lines). */
int pool_dump(const char *reason);

#endif /* FW_H */

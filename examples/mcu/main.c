// SPDX-License-Identifier: MIT
/*
 * main.c - a small firmware whose heap is read off the device
 * (docs/MCU.md): it allocates and frees from the pool in a few nested
 * functions, leaks some on purpose, and prints its live blocks as
 * heapsnoop's dump lines (`~m#` records) to UART0 twice, then its end
 * marker. tests/mcu/test_mcu.sh runs it in qemu-system-arm -M mps2-an385
 * and checks what heapdecode -e fw.elf names. What it leaves live at the
 * end (the test's numbers):
 *
 *   config_entry    3 blocks of 40 bytes   config_load <- main
 *   packet_buffer   2 blocks of 120 bytes  net_rx <- net_poll <- main
 *   deep_leaf       1 block of 16 bytes    nest x 40 <- main: deeper than
 *                                          a record's 31 frames, cut=depth
 *
 * Every function here is noinline, so that each is a frame of its own.
 */
#include "fw.h"

#define NOINLINE __attribute__((noinline))

extern uint32_t __bss_end, __stack_top;

static void *keep[8];	/* what main keeps (the leaks, reachable) */
static volatile int sink;
/* The loops' counts, read at run time: -Os would otherwise unroll a loop
 * of 3 into 3 call sites, 3 stacks where the report should show one. */
static volatile int n_config = 3, n_packets = 5, n_samples = 8;

#define PAINT 0x5ca1ab1eu

/* Paint the free stack below main's frame (the words from the end of bss
 * to 256 bytes below here), to see at the end how deep the stack went. */
NOINLINE static void stack_paint(void)
{
	uint32_t *w = &__bss_end, *sp = (uint32_t *)__builtin_frame_address(0) - 64;

	while (w < sp)
		*w++ = PAINT;
}

/* The deepest the stack went since stack_paint(), in bytes. */
NOINLINE static uint32_t stack_used(void)
{
	const uint32_t *w = &__bss_end;

	while (*w == PAINT)
		w++;
	return (uint32_t)((const char *)&__stack_top - (const char *)w);
}

static void put_u(uint32_t v)
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

NOINLINE static void *config_entry(int i)
{
	char *s = pool_alloc(40);

	if (s)
		s[0] = (char)('a' + i);
	return s;
}

NOINLINE static void config_load(void)
{
	for (int i = 0; i < n_config; i++)
		keep[i] = config_entry(i);
}

NOINLINE static void *packet_buffer(void)
{
	return pool_alloc(120);
}

/* Five packets: the 1st and the 4th are kept (leaked), the rest freed. */
NOINLINE static void net_rx(int n)
{
	void *pkt = packet_buffer();

	if (n == 0 || n == 3)
		keep[3 + (n == 3)] = pkt;
	else
		pool_free(pkt);
}

NOINLINE static void net_poll(void)
{
	for (int n = 0; n < n_packets; n++)
		net_rx(n);
}

NOINLINE static void *sensor_sample(void)
{
	return pool_alloc(24);
}

/* Eight samples taken and all given back: nothing of them is live at the end. */
NOINLINE static void sensor_read(void)
{
	void *s[8];
	int n = n_samples;

	for (int i = 0; i < n; i++)
		s[i] = sensor_sample();
	for (int i = 0; i < n; i++)
		pool_free(s[i]);
}

NOINLINE static void *deep_leaf(void)
{
	return pool_alloc(16);
}

/* @levels frames of nest() above deep_leaf(). */
NOINLINE static void *nest(int levels)
{
	void *p = levels ? nest(levels - 1) : deep_leaf();

	sink++;	/* not a tail call: each level keeps its frame */
	return p;
}

int main(void)
{
	stack_paint();
	uart_init();
	uart_puts("fw: heap records demo on mps2-an385\n");
	if (pool_init()) {
		uart_puts("fw: FAIL pool_init\n");
		return 1;
	}
	config_load();
	sensor_read();
	if (pool_dump("interval"))	/* 3 live: the config entries */
		return 1;
	net_poll();
	keep[5] = nest(40);
	sensor_read();
	for (int i = 0; i < 6; i++) {
		if (!keep[i]) {
			uart_puts("fw: FAIL pool empty\n");
			return 1;
		}
	}
	if (pool_dump("exit"))
		return 1;
	uart_puts("fw: stack used ");
	put_u(stack_used());
	uart_puts(" bytes at most\n");
	uart_puts("fw: done\n");
	return 0;
}

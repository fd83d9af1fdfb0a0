// SPDX-License-Identifier: MIT
/*
 * prog_rtleak.c - a program whose live set at exit holds one leak of its
 * own and the C runtime's stdout buffer (test_runtime.sh): own_leak()
 * keeps LEAK_BYTES, then printf writes a line, so glibc allocates
 * stdout's buffer (_IO_file_doallocate) and keeps it for the process's
 * lifetime. Nothing else allocates.
 */
#include <stdio.h>
#include <stdlib.h>

#define LEAK_BYTES 4000

__attribute__((noinline)) static void *own_leak(void)
{
	void *p = malloc(LEAK_BYTES);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	void *volatile p = own_leak();

	printf("leaked %d bytes at %p\n", LEAK_BYTES, p);
	return 0;
}

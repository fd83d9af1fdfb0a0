// SPDX-License-Identifier: MIT
/*
 * prog_sys_short.c - the system-wide test's short-lived program: leaks 7
 * blocks of 300 bytes from short_leak() and exits at once (it lives about
 * a millisecond: its mappings must be known before anyone could read its
 * /proc files). No stdio: nothing else allocates.
 */
#include <stdlib.h>

void *volatile sink[8];

__attribute__((noinline)) void short_leak(void)
{
	for (int i = 0; i < 7; i++)
		sink[i] = malloc(300);
}

int main(void)
{
	short_leak();
	return 0;
}

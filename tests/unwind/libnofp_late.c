// SPDX-License-Identifier: MIT
/*
 * libnofp_late.c - a module the program dlopen()s after it has started
 * (after heapsnoop attached): late_enter -> late_mid -> the callback.
 */
#include "nofp.h"

volatile unsigned long late_sink;

__attribute__((noipa)) static void *late_mid(nofp_cb cb, size_t n)
{
	unsigned long a = late_sink, b = a * 31 + 7, c = b * 17 + 3;
	void *p = cb(n, 0);

	late_sink = a + b + c;
	return p;
}

__attribute__((noipa)) void *late_enter(nofp_cb cb, size_t n)
{
	unsigned long a = late_sink, b = a * 29 + 5;
	void *p = late_mid(cb, n);

	late_sink = a ^ b;
	return p;
}

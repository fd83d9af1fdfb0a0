// SPDX-License-Identifier: MIT
/* msg.c - one-line diagnostics on standard error (see msg.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "msg.h"

static const char *prog_name = "heapsnoop";

void msg_init(const char *prog)
{
	prog_name = prog;
}

void elog(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	flockfile(stderr);
	fputs(prog_name, stderr);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	fflush(stderr);
	errno = saved;
}

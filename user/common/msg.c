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

static void vflog(FILE *out, const char *fmt, va_list ap)
{
	int saved = errno;

	flockfile(out);
	fputs(prog_name, out);
	fputs(": ", out);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	funlockfile(out);
	fflush(out);
	errno = saved;
}

void elog(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vflog(stderr, fmt, ap);
	va_end(ap);
}

void flog(FILE *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vflog(out, fmt, ap);
	va_end(ap);
}

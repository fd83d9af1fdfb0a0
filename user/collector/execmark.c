// SPDX-License-Identifier: MIT
/*
 * execmark.c - an exec under way, marked in the live table's header
 * (exec_pending: the pid that execs) around the C library's exec
 * functions. Once an exec succeeds the image's table is final and the
 * new image (with the collector, from the inherited LD_PRELOAD) says
 * hello under the same pid: heapsnoop drops the old image's blocks, as
 * the tracer does at an exec. A process that ends with the mark set and
 * no new hello exec'd into an image without the collector (a static or
 * setuid program, LD_PRELOAD cleared): heapsnoop says so (exit status 3)
 * instead of reporting the old blocks as live at its end. The mark is a
 * pid, not a flag: a vfork child shares this memory, and its exec must
 * not mark its parent. glibc's exec functions call __execve directly,
 * so every public one is interposed; execl* build their argv here and go
 * through the matching exec*v.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ltwrite.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execv)(const char *, char *const[]);
static int (*real_execvp)(const char *, char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);

/* Found once, at set-up (never in a vfork child, which must not allocate). */
void execmark__init(void)
{
	real_execve = dlsym(RTLD_NEXT, "execve");
	real_execv = dlsym(RTLD_NEXT, "execv");
	real_execvp = dlsym(RTLD_NEXT, "execvp");
	real_execvpe = dlsym(RTLD_NEXT, "execvpe");
	real_fexecve = dlsym(RTLD_NEXT, "fexecve");
}

static void mark(void)
{
	if (lt.base)
		__atomic_store_n(&lt.h->exec_pending, (int32_t)syscall(SYS_getpid), __ATOMIC_RELEASE);
}

/* The exec failed: the image goes on. */
static int unmark(int r)
{
	int e = errno;

	if (lt.base)
		__atomic_store_n(&lt.h->exec_pending, 0, __ATOMIC_RELEASE);
	errno = e;
	return r;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	if (!real_execve)
		return (int)syscall(SYS_execve, path, argv, envp);
	mark();
	return unmark(real_execve(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	if (!real_execv)
		return execve(path, argv, environ);
	mark();
	return unmark(real_execv(path, argv));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	if (!real_execvp) {
		errno = ENOSYS;
		return -1;
	}
	mark();
	return unmark(real_execvp(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!real_execvpe) {
		errno = ENOSYS;
		return -1;
	}
	mark();
	return unmark(real_execvpe(file, argv, envp));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (!real_fexecve) {
		errno = ENOSYS;
		return -1;
	}
	mark();
	return unmark(real_fexecve(fd, argv, envp));
}

/* execl*'s list: how many up to its NULL, @first included (1 if it is NULL). */
static size_t count_args(const char *first, va_list *ap)
{
	size_t n = 1;

	if (first)
		while (va_arg(*ap, char *))
			n++;
	return n;
}

/* ... into @argv (@n + 1 entries, the last NULL). */
static void take_args(char **argv, size_t n, const char *first, va_list *ap)
{
	argv[0] = (char *)first;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(*ap, char *);
	argv[n] = NULL;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;

	/* glibc declares @arg nonnull; a NULL one (an empty argv) is passed on as it is. */
	__asm__("" : "+r"(arg));
	va_start(ap, arg);
	n = count_args(arg, &ap);
	va_end(ap);
	{
		char *argv[n + 1];

		va_start(ap, arg);
		take_args(argv, n, arg, &ap);
		va_end(ap);
		return execv(path, argv);
	}
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	size_t n;

	/* glibc declares @arg nonnull; a NULL one (an empty argv) is passed on as it is. */
	__asm__("" : "+r"(arg));
	va_start(ap, arg);
	n = count_args(arg, &ap);
	va_end(ap);
	{
		char *argv[n + 1];

		va_start(ap, arg);
		take_args(argv, n, arg, &ap);
		va_end(ap);
		return execvp(file, argv);
	}
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;
	char **envp;

	__asm__("" : "+r"(arg));
	va_start(ap, arg);
	n = count_args(arg, &ap);
	va_end(ap);
	{
		char *argv[n + 1];

		va_start(ap, arg);
		take_args(argv, n, arg, &ap);
		if (arg)
			(void)va_arg(ap, char *);	/* the list's NULL */
		envp = va_arg(ap, char **);
		va_end(ap);
		return execve(path, argv, envp);
	}
}

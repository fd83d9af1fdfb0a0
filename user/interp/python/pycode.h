/* SPDX-License-Identifier: MIT */
/*
 * pycode.h - what a CPython code object says of a frame: its qualified
 * name (co_qualname: "K.__init__", "make.<locals>.<listcomp>"), its file
 * (co_filename: a path, "<frozen importlib._bootstrap>", "<string>"), its
 * first line, its first traceable instruction and its location table,
 * read through a reader the caller gives: the tracer's reads another
 * process's memory (process_vm_readv), the collector's its own. Nothing
 * of the Python C API is called: the layout is pylayout.h's.
 *
 * Strings are read as CPython keeps them (compact str objects: ASCII,
 * Latin-1, UCS-2 or UCS-4) and given as UTF-8.
 */
#ifndef HEAPSNOOP_PYCODE_H
#define HEAPSNOOP_PYCODE_H

#include <stddef.h>
#include <stdint.h>

#include "pylayout.h"

/* Read @len bytes at @addr into @buf: 0, or -errno (-EFAULT: not there). */
typedef int (*py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The longest strings and table read; longer ones are cut (a name, a file) or refused. */
#define PY_NAME_MAX 1024
#define PY_FILE_MAX 4096
#define PY_TABLE_MAX (1u << 20)

struct py_code {
	char *name;		/* UTF-8, malloc'ed */
	char *file;		/* UTF-8, malloc'ed */
	int firstline;		/* co_firstlineno */
	int firsttraceable;	/* _co_firsttraceable; -1: not known */
	uint8_t *table;		/* co_linetable's bytes, malloc'ed */
	size_t table_len;
};

/*
 * Read the code object at @addr into @c (free with py_code__fini): its
 * type must be @code_type (&PyCode_Type in the process), so that an
 * address that holds something else now is refused, never named.
 * Returns 0; -EFAULT (not readable); -ESTALE (not a code object, or its
 * fields are not a code object's); -ENOMEM.
 */
int py_code__read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr,
		  uint64_t code_type, struct py_code *c);

void py_code__fini(struct py_code *c);

/*
 * The line of code unit @index of @c (pylines.h: a line, PY_LINE_NONE,
 * PY_LINE_BAD).
 */
int py_code__line(const struct py_code *c, int index);

/*
 * @n characters of @kind bytes each (1: Latin-1, 2: UCS-2, 4: UCS-4) at
 * @data as a malloc'ed UTF-8 string; a character that is not Unicode
 * (a lone surrogate, past U+10FFFF) becomes U+FFFD. NULL: no memory or
 * a bad kind.
 */
char *py_str__utf8(const void *data, size_t n, unsigned int kind);

/*
 * The str object at @addr as a malloc'ed UTF-8 string in *@out, at most
 * @max characters (the rest cut). Returns 0, -EFAULT, -ESTALE (not a
 * compact str), -ENOMEM.
 */
int py_str__read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr,
		 size_t max, char **out);

#endif /* HEAPSNOOP_PYCODE_H */

/* SPDX-License-Identifier: MIT */
/*
 * suppress.h - leak suppressions in LeakSanitizer's file format, so a
 * project's existing lsan.supp works as it is:
 *
 *   # a comment
 *   leak:PATTERN
 *
 * A pattern matches a frame when it matches the frame's function name,
 * its module's path or its source file's path (an inlined function's
 * name and file too); a stack is suppressed when any of its frames
 * matches. As in LSan (sanitizer_common's TemplateMatch): `*` is any
 * text, a leading `^` and a trailing `$` anchor the pattern; without
 * them it may match anywhere in the name ("leak:libfoo.so" matches
 * "/usr/lib/libfoo.so.1").
 */
#ifndef HEAPSNOOP_SUPPRESS_H
#define HEAPSNOOP_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacks.h"
#include "symbolizer.h"

struct suppress;

/* Symbolize return address @addr of process @pid into @f. */
typedef void (*suppress_lookup_fn)(void *ctx, uint32_t pid, uint64_t addr,
				   struct sym_frame *f);

/*
 * Read the suppressions of file @path. Returns them, or NULL after saying
 * why (msg.h): unreadable, or a line that is not a comment, empty or
 * `leak:PATTERN` (its file and line number said).
 */
struct suppress *suppress__load(const char *path);
void suppress__free(struct suppress *s);

/*
 * The index of the first pattern that matches frame @f (symbolized as
 * symbolizer.h gives it), or -1.
 */
int suppress__match(const struct suppress *s, const struct sym_frame *f);

/*
 * The index of the pattern that suppresses stack @st, or -1: a file's
 * (suppress__load) when any frame matches, as LSan's; the C runtime's
 * (suppress__runtime) when one of the innermost frames that lie in the
 * C runtime (frame 0 on, up to the first frame of another module)
 * matches by function name. Frames symbolized through @lookup.
 */
int suppress__stack(const struct suppress *s, const struct stack *st, suppress_lookup_fn lookup,
		    void *ctx);

/*
 * The C runtime's own allocations, kept for the process's lifetime and
 * never freed by it (glibc's stdio buffers, thread-local storage, the
 * dynamic loader's objects, locale, time zone, NSS and iconv caches,
 * atexit's table): a built-in list, matched by suppress__stack() on the
 * innermost C runtime frames only (libc.so, ld-linux*.so, libpthread,
 * libdl), so that a library's constructor that dlopen runs, or a file
 * fopen'd and never closed (its FILE, fopen's), is still the program's.
 * As LeakSanitizer's built-in suppressions (tls_get_addr, pthread_exit,
 * ld.so's allocations taken as reachable) and valgrind's default ones.
 * A static program's C library is its own: none of it matches.
 * Never NULL, never freed.
 */
const struct suppress *suppress__runtime(void);
/* Is @path (a module's, any directory) one of the C runtime's files? */
bool suppress__runtime_module(const char *path);
/* What pattern @i of the built-in list keeps ("stdio buffer"); NULL for a file's. */
const char *suppress__what(const struct suppress *s, int i);

/* What the built-in list took: bytes, allocations, and which kinds. */
struct suppress_tally {
	uint64_t bytes, count;
	uint32_t whats;		/* a bit per kind (suppress__what()'s) */
};
/* @bytes in @count allocations, matched by the built-in pattern @i, into @t. */
void suppress__tally_add(struct suppress_tally *t, int i, uint64_t bytes, uint64_t count);
/*
 * @t as "4096 bytes in 1 allocations (stdio buffer, dynamic loader)"
 * into @buf of @len bytes; returns @buf.
 */
const char *suppress__tally_text(const struct suppress_tally *t, char *buf, size_t len);

/* How many patterns the file holds. */
size_t suppress__count(const struct suppress *s);
/* Pattern @i as written in the file ("leak:" left out). */
const char *suppress__pattern(const struct suppress *s, int i);

/* Does LSan template @pat match @text? (Exposed for the unit tests.) */
bool suppress__template_match(const char *pat, const char *text);

#endif /* HEAPSNOOP_SUPPRESS_H */

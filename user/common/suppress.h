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

#include "symbolizer.h"

struct suppress;

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

/* How many patterns the file holds. */
size_t suppress__count(const struct suppress *s);
/* Pattern @i as written in the file ("leak:" left out). */
const char *suppress__pattern(const struct suppress *s, int i);

/* Does LSan template @pat match @text? (Exposed for the unit tests.) */
bool suppress__template_match(const char *pat, const char *text);

#endif /* HEAPSNOOP_SUPPRESS_H */

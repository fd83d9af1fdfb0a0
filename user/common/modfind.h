/* SPDX-License-Identifier: MIT */
/*
 * modfind.h - a module's files found by its GNU build ID, as gdb and
 * elfutils look for them: DIR/.build-id/xx/rest (the file itself: a
 * build-id tree's link to it, or a copy) and DIR/.build-id/xx/rest.debug
 * (its separate debug file, objcopy --only-keep-debug), xx the ID's first
 * byte in hex, rest the others; each file's own build ID read and checked
 * before it is used. The symbolizer (symbolizer.h) finds with it a module
 * whose path is not there (heapdecode on another machine: the binary
 * moved, renamed), and heapdecode's offline unwinding its CFI
 * (symbolizer__module_files()).
 */
#ifndef HEAPSNOOP_MODFIND_H
#define HEAPSNOOP_MODFIND_H

#include "text.h"

/*
 * The GNU build ID of the ELF file open at @fd, in hex into @hex
 * (BUILD_ID_HEX_SIZE bytes). Returns 0, or -ENOENT (not ELF, no build ID).
 */
int modfind__build_id(int fd, char *hex);

/*
 * The file of build ID @build_id (hex, as a `map` record has it) under the
 * first of @dirs (NULL-terminated; NULL entries before the end skipped:
 * @ndirs of them) that has one: DIR/.build-id/xx/rest@suffix ("" for the
 * file, ".debug" for its debug file), a regular file, opened read-only,
 * its own build ID @build_id. Its path into @path (@cap bytes) if not
 * NULL. Returns the fd, or -1: not found, or @build_id not hex of 2 to
 * BUILD_ID_MAX bytes.
 */
int modfind__by_build_id(const char *const *dirs, int ndirs, const char *build_id,
			 const char *suffix, char *path, size_t cap);

#endif /* HEAPSNOOP_MODFIND_H */

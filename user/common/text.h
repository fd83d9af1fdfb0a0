/* SPDX-License-Identifier: MIT */
/*
 * text.h - the small text forms both programs write: a build ID in hex
 * (as `map` records carry it, docs/OUTPUT.md), a path's file name (as
 * frames name their module), text escaped for XML (the SVGs) and JSON,
 * a traced program's text made printable.
 */
#ifndef HEAPSNOOP_TEXT_H
#define HEAPSNOOP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BUILD_ID_MAX 64				/* bytes of a GNU build ID, at most */
#define BUILD_ID_HEX_SIZE (2 * BUILD_ID_MAX + 1)	/* its hex, NUL included */

/*
 * Lower-case hex of the @len bytes at @id into @out (2 * @len + 1 bytes,
 * at most BUILD_ID_HEX_SIZE); "-" if @len <= 0 (no build ID).
 */
void build_id_hex(const uint8_t *id, int len, char *out);

/* The last component of @path (after its last '/'); "?" for NULL. */
const char *path_base(const char *path);

/*
 * The length of function name @name without the ELF symbol version a
 * symbol table may append ("__libc_start_main@@GLIBC_2.34",
 * "memcpy@GLIBC_2.2.5": up to the '@'), so that stacks from two builds
 * of a library name their functions alike (--folded, --pprof).
 */
size_t symbol_unversioned_len(const char *name);

/*
 * @bytes as a human report shows a size, into @buf (32 bytes): below
 * 1 KiB "N bytes", else 1024-based with one decimal, "4.0 KiB",
 * "96.5 MiB", "1.2 GiB"; with @sign the value is a signed difference
 * (--base, --growth), "+4.0 KiB", "-12 bytes". Returns @buf. Machine
 * formats (records, JSON, pprof, folded) keep exact bytes.
 */
const char *text_size(uint64_t bytes, bool sign, char *buf);

/*
 * Write @s (NULL: nothing) to @out as XML text or attribute content:
 * & < > " ' escaped, control characters but tab left out (XML 1.0 has none).
 */
void xml_escape(FILE *out, const char *s);

/* @s as a JSON string, quotes included; null for NULL (--json, --speedscope). */
void json_string(FILE *out, const char *s);

/*
 * A text of the traced program (an interpreter's function or file name, a
 * JIT range's; docs/OUTPUT.md, `frame` and `jit`) as every report prints
 * it: valid UTF-8 with no control character, so that no name breaks a line
 * of a report, moves a terminal's cursor or makes JSON or protobuf
 * invalid. Each byte that is a control character (below 0x20, 0x7f), is
 * not part of a valid UTF-8 sequence, or is '%', is written %XX (so a
 * '%' always starts one). Returns @s itself if it is printable as it is,
 * else a malloc'ed copy, or NULL with no memory.
 */
char *text_printable(const char *s);

#endif /* HEAPSNOOP_TEXT_H */

/* SPDX-License-Identifier: MIT */
/*
 * jitdump.h - the code a JIT compiler describes in its jitdump, the file
 * `perf inject --jit` reads (node's --perf-prof writes jit-PID.dump;
 * the JVM's and .NET's agents, CPython 3.13's -X perf_jit too): each
 * piece of code's range, name and, where the writer gave them, the
 * source lines of its instructions; read for frames in anonymous
 * executable memory (mapset.h's MAPPING_ANON), as the perf map is
 * (perfmap.h).
 *
 * The format is perf's (tools/perf/util/jitdump.h, jitdump.c; the spec:
 * tools/perf/Documentation/jitdump-specification.txt): a header (magic
 * "JiTD" as a 32-bit word in the writer's byte order, version 1, its own
 * size, ...) and records, each a 16-byte prefix (id, total size,
 * timestamp) and its body:
 *
 *   JIT_CODE_LOAD        pid, tid, vma, code_addr, code_size, code_index,
 *                        name (NUL-ended), the code's bytes (not read)
 *   JIT_CODE_MOVE        pid, tid, vma, old_code_addr, new_code_addr,
 *                        code_size, code_index: the code of that index,
 *                        now at new_code_addr
 *   JIT_CODE_DEBUG_INFO  code_addr, nr_entry, entries (addr, line,
 *                        discrim, file name NUL-ended; "\xff" alone: the
 *                        previous entry's file), for the next LOAD of
 *                        code_addr
 *   others (CLOSE, UNWINDING_INFO, ids perf does not know) are skipped.
 *
 * An entry's addr is read as perf inject reads it: perf writes the code
 * into an ELF file at text offset 0x40 (GEN_ELF_TEXT_OFFSET) and makes
 * the line table of addr - code_addr, so an entry names the code at
 * addr - 0x40 (V8 writes its entries so: code offset + 0x40).
 *
 * The file is the traced process's and hostile (jitdumpfile.c opens it):
 * every length is checked against the record and the file before it is
 * used; a record is taken only once the file holds it whole (the writer
 * appends through a buffer: the tail may be a part of one, read again
 * when the file has grown); a name is read JIT_DUMP_NAME_MAX bytes at most
 * and a DEBUG_INFO record JIT_DUMP_RECORD_MAX (a larger one is skipped,
 * counted); the code's bytes are never read. A file in the other byte
 * order, of another version, not a jitdump, or whose records stop making
 * sense is refused (jit_dump__why() says why) and what was taken before
 * stays.
 */
#ifndef HEAPSNOOP_JITDUMP_H
#define HEAPSNOOP_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JIT_DUMP_MAGIC		0x4A695444u	/* "JiTD" */
#define JIT_DUMP_VERSION	1
#define JIT_DUMP_HEADER_SIZE	40		/* the header's fields */
#define JIT_DUMP_HEADER_MAX	4096		/* its total_size, at most */
#define JIT_DUMP_ELF_TEXT_OFFSET 0x40		/* perf's GEN_ELF_TEXT_OFFSET */
#define JIT_DUMP_NAME_MAX	4000		/* a name's bytes read (< PERF_MAP_LINE) */
#define JIT_DUMP_FILE_MAX	4096		/* a file name's bytes kept */
#define JIT_DUMP_RECORD_MAX	(1u << 20)	/* a DEBUG_INFO record read, at most */
#define JIT_DUMP_MAX_BYTES	(4ull << 30)	/* the file's bytes gone through */
#define JIT_DUMP_MAX_LINES	(1u << 24)	/* debug entries kept in all */

/* Where the file stands. */
enum jit_dump_state {
	JIT_DUMP_WAIT,		/* its header is not whole yet: read again later */
	JIT_DUMP_OK,		/* read as it grows */
	JIT_DUMP_FOREIGN,	/* refused: the other byte order */
	JIT_DUMP_NOT_JITDUMP,	/* refused: no jitdump magic */
	JIT_DUMP_BAD_VERSION,	/* refused: a version perf does not read either */
	JIT_DUMP_CORRUPT,	/* refused from a bad header or record on */
};

/* A piece of code, and the source line of one address in it. */
struct jit_code {
	uint64_t start, end;	/* [start, end): the code */
	const char *name;	/* the LOAD's; lives as long as the jit_dump */
	uint32_t id;		/* the LOAD's or MOVE's number among those taken */
	/*
	 * The line of the address asked for (DEBUG_INFO), if its code has
	 * any: [lstart, lend) the addresses of that line's entry, @line its
	 * line (0 and @file NULL: before the code's first entry), @lidx the
	 * entry's number in the code's + 1. No debug info: [start, end), 0.
	 */
	uint64_t lstart, lend;
	const char *file;
	uint32_t line, lidx;
};

struct jit_dump_stats {
	uint64_t bytes;		/* the file's bytes gone through */
	uint64_t loads, moves;	/* records taken */
	uint64_t debug, lines;	/* DEBUG_INFO records given to a LOAD, their entries kept */
	uint64_t bad;		/* records skipped: a field out of its record, an empty
				 * range, an unknown MOVE, a DEBUG_INFO not followed by
				 * its LOAD */
	uint64_t skipped;	/* DEBUG_INFO records over JIT_DUMP_RECORD_MAX */
	uint64_t resets;	/* times the file was made shorter (read again) */
	bool capped;		/* JIT_DUMP_MAX_BYTES, the lines' or the names' limit */
	enum jit_dump_state state;
};

/*
 * Where the parser gets the file's bytes: @n bytes at offset @off into
 * @buf; 0, or negative (the bytes are not there: read again later).
 */
typedef int (*jit_dump_read_fn)(void *ctx, uint64_t off, void *buf, size_t n);

struct jit_dump;

/* Nothing read yet; NULL: no memory. */
struct jit_dump *jit_dump__new(void);
void jit_dump__free(struct jit_dump *jd);

/*
 * Take what a file of @size bytes holds past what was taken, its bytes
 * through @rd: whole records only. A @size below what was taken is
 * another content: everything forgotten, read from the start (a reset).
 * Returns the LOADs and MOVEs taken; -EPROTO: the file is refused
 * (jit_dump__why()); -ENOMEM.
 */
int jit_dump__parse(struct jit_dump *jd, jit_dump_read_fn rd, void *ctx, uint64_t size);

/* The same from @len bytes at @buf, the file's content from its start (tests, fuzzing). */
int jit_dump__feed(struct jit_dump *jd, const void *buf, size_t len);

/*
 * The newest code holding @addr (a LOAD or MOVE taken later wins), and
 * @addr's source line, into @out. Returns 0 or -ENOENT.
 */
int jit_dump__find(const struct jit_dump *jd, uint64_t addr, struct jit_code *out);

/* LOADs and MOVEs taken (ids 0 to this, less one), since the last reset. */
uint32_t jit_dump__count(const struct jit_dump *jd);

void jit_dump__stats(const struct jit_dump *jd, struct jit_dump_stats *st);

/* Why the file is refused, or waited for, in words; "" when it is read. */
const char *jit_dump__why(const struct jit_dump *jd);

#endif /* HEAPSNOOP_JITDUMP_H */

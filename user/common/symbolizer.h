/* SPDX-License-Identifier: MIT */
/*
 * symbolizer.h - runtime address -> function+offset, source file:line,
 * module, through elfutils' libdwfl: the module's symbol table (its file
 * by the log's path, else by its build ID: modfind.h), separate
 * debug info found by build ID (/usr/lib/debug/.build-id), .gnu_debuglink,
 * an extra debug directory, and debuginfod when DEBUGINFOD_URLS is set
 * (through elfutils' debuginfod-find, debuginfod.h).
 *
 * Each module (path + build ID) is opened once and shared by every process
 * that maps it: addresses are turned into ELF addresses through the
 * mapping (mapset.h) the caller found them in. A file whose build ID is
 * not the recorded one is never used to name anything.
 */
#ifndef HEAPSNOOP_SYMBOLIZER_H
#define HEAPSNOOP_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "mapset.h"

struct symbolizer;

enum sym_status {
	SYM_OK,			/* function found (file:line when debug info has it) */
	SYM_NO_SYMBOL,		/* module found, no symbol covers the address */
	SYM_NO_FILE,		/* module file not found (under the sysroot) */
	SYM_NOT_OPENED,		/* not looked for: --no-local-files */
	SYM_NOT_REGULAR,	/* the path names a FIFO, a device, a directory */
	SYM_BUILD_ID_MISMATCH,	/* file found but it is not the traced one */
	SYM_UNMAPPED,		/* the address is in no known mapping */
	SYM_NO_FRAME,		/* an interpreter frame whose `frame` record the log lacks */
};

/* A function inlined at the address, innermost first (DWARF scopes). */
#define SYM_MAX_INLINE 8
struct sym_inline {
	const char *func;	/* the inlined function */
	const char *file;	/* where in it the address is, or NULL */
	int line;
};

struct sym_frame {
	enum sym_status status;
	/*
	 * Demangled, without the symbol version a symbol table may append
	 * ("malloc@@GLIBC_2.2.5": malloc) unless symbolizer_opts asks for
	 * it; NULL unless SYM_OK.
	 */
	const char *func;
	uint64_t func_off;	/* address - function start, bytes */
	const char *file;	/* source file or NULL; with inlines: the call */
	int line;		/* 0 if unknown */	/* site of the outermost inline */
	int ninline;
	struct sym_inline inl[SYM_MAX_INLINE];
	const char *module;	/* path of the mapped file or NULL; "[KIND]"
				 * for a frame that is not native code */
	uint64_t elf_addr;	/* address in the module's ELF file (0: not
				 * known, the file not opened) */
	uint64_t file_off;	/* the address's offset in the module's file,
				 * known when it is not found too (-e: elf_addr) */
	/*
	 * A frame that is not native code (frametab.h): the interpreter's
	 * kind ("python", "lua": func and file:line its function and
	 * line), or "jit" (func a JIT range's name, func_off into it);
	 * NULL for native code.
	 */
	const char *kind;
};

struct symbolizer_opts {
	const char *sysroot;	/* the root module paths resolve in, or NULL */
	const char *debug_dir;	/* extra directory of debug files, or NULL */
	bool no_local_files;	/* no sysroot: open no path a log names */
	bool symbol_versions;	/* names keep their symbol version (@@GLIBC_...) */
};

/*
 * A symbolizer for @opts (NULL: none). Every module path is hostile (it
 * comes from a log): only plain absolute paths, resolved under the
 * sysroot with openat2(RESOLVE_IN_ROOT), only regular files opened, never
 * blocking (a FIFO is not opened at all). Returns NULL: no memory.
 */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);

/*
 * Symbolize @addr of mapping @m. @is_return: @addr is a return address
 * (every frame of a heapsnoop stack), so the call instruction before it is
 * what is looked up. Strings live until symbolizer__free.
 * Returns 0 (see out->status) or -ENOMEM.
 */
int symbolizer__lookup(struct symbolizer *s, const struct mapping *m, uint64_t addr,
		       bool is_return, struct sym_frame *out);

/*
 * Symbolize @elf_addr, an address of ELF file @path itself (addr2line -e:
 * a non-PIE program or a firmware image). @path is the user's own, not a
 * log's: relative to the current directory, never under the sysroot.
 * Same results as above.
 */
int symbolizer__lookup_elf(struct symbolizer *s, const char *path, uint64_t elf_addr,
			   bool is_return, struct sym_frame *out);

/*
 * The files of module @path, build ID @build_id ("-": none), for the
 * unwinder (unwind/cfi.h's cfi_src, heapdecode's offline unwinding): the
 * file the log names, opened as symbolizer__lookup opens it (under the
 * sysroot, its build ID checked), else the file of that build ID under
 * the debug directory, the sysroot's /usr/lib/debug or ours
 * (modfind.h); and its separate debug file, found by build ID there
 * (.debug) or from debuginfod, or -1. Returns 0 with both fds the
 * caller's, or -ENOENT with *@why saying why not (SYM_NO_FILE,
 * SYM_BUILD_ID_MISMATCH, SYM_NOT_OPENED, SYM_NOT_REGULAR).
 */
int symbolizer__module_files(struct symbolizer *s, const char *path, const char *build_id,
			     int *fd, int *debug_fd, enum sym_status *why);

/* A module whose frames could not be named: its file not found, or not the traced one. */
struct sym_missing {
	const char *path, *build_id;	/* as the log names them; build ID "-": none */
	enum sym_status status;		/* SYM_NO_FILE or SYM_BUILD_ID_MISMATCH */
	uint64_t first_off;		/* the first one's file offset (sym_frame) */
};

/*
 * Each module looked up so far that named nothing, in no particular
 * order: start with *@pos 0; false at the end. Strings live until
 * symbolizer__free.
 */
bool symbolizer__next_missing(struct symbolizer *s, size_t *pos, struct sym_missing *out);

/*
 * Lookups so far of addresses in a module (a mapping's file, or -e's)
 * into *@looked, those that named a function into *@named: none of many
 * named means the files are not the traced ones, or not there. Lookups
 * of unmapped addresses and under --no-local-files are not counted.
 */
void symbolizer__counts(const struct symbolizer *s, uint64_t *looked, uint64_t *named);

/* Human text for a status ("build ID mismatch", ...). */
const char *sym_status_str(enum sym_status st);

#endif /* HEAPSNOOP_SYMBOLIZER_H */

// SPDX-License-Identifier: MIT
/*
 * symbolizer.c - libdwfl-based symbolization keyed by module (see
 * symbolizer.h). Modules are reported at load bias 0, so a module's
 * addresses are its ELF virtual addresses; the runtime -> ELF translation
 * uses the PT_LOAD that holds the mapping's file offset.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfseg.h"
#include "symbolizer.h"

/* C++ names: libstdc++'s demangler (the one eu-addr2line uses too). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct module {
	char *path;		/* as recorded */
	char build_id[BUILD_ID_HEX_SIZE];
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct elf_segments segs;	/* of the file found, for to_elf_addr() */
	enum sym_status status;	/* SYM_OK if usable */
	struct module *next;
};

/* Results by (module, ELF address): direct-mapped, fixed size. */
#define CACHE_SLOTS 8192

struct cache_slot {
	const struct module *mod;	/* NULL: empty */
	uint64_t elf_addr;
	bool is_return;
	struct sym_frame frame;
};

struct symbolizer {
	struct cache_slot *cache;
	uint64_t hits, misses;
	char *sysroot;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	struct module *modules;
	char **strings;		/* demangled names, freed at the end */
	size_t nstrings, capstrings;
};

const char *sym_status_str(enum sym_status st)
{
	switch (st) {
	case SYM_OK: return "ok";
	case SYM_NO_SYMBOL: return "no symbol";
	case SYM_NO_FILE: return "module file not found";
	case SYM_BUILD_ID_MISMATCH: return "build ID mismatch: file differs from the traced one";
	case SYM_UNMAPPED: return "not in any mapping";
	}
	return "?";
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cache = calloc(CACHE_SLOTS, sizeof(*s->cache));
	if (!s->cache) {
		free(s);
		return NULL;
	}
	if (opts && opts->sysroot)
		s->sysroot = strdup(opts->sysroot);
	/* libdwfl's search path: "-" = no CRC check, then .debug dirs. */
	if (asprintf(&s->debuginfo_path, "-%s%s:.debug:/usr/lib/debug",
		     opts && opts->debug_dir ? ":" : "",
		     opts && opts->debug_dir ? opts->debug_dir : "") < 0) {
		free(s->sysroot);
		free(s->cache);
		free(s);
		return NULL;
	}
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	while (s->modules) {
		struct module *m = s->modules;

		s->modules = m->next;
		if (m->dwfl)
			dwfl_end(m->dwfl);
		elf_segments__free(&m->segs);
		free(m->path);
		free(m);
	}
	for (size_t i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->debuginfo_path);
	free(s->sysroot);
	free(s->cache);
	free(s);
}

static void open_module(struct symbolizer *s, struct module *m)
{
	char file[4096];
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n;

	snprintf(file, sizeof(file), "%s%s", s->sysroot ? s->sysroot : "", m->path);
	if (access(file, R_OK)) {
		m->status = SYM_NO_FILE;
		return;
	}
	m->dwfl = dwfl_begin(&s->cb);
	if (!m->dwfl) {
		m->status = SYM_NO_FILE;
		return;
	}
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, m->path, file, -1, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		m->status = SYM_NO_FILE;
		return;
	}
	n = dwfl_module_build_id(m->mod, &bits, &vaddr);
	if (strcmp(m->build_id, "-")) {
		char got[BUILD_ID_HEX_SIZE] = "-";

		if (n > 0 && n <= BUILD_ID_MAX)
			build_id_hex(bits, n, got);
		if (strcmp(got, m->build_id)) {
			m->status = SYM_BUILD_ID_MISMATCH;
			return;
		}
	}
	m->status = SYM_OK;
}

static struct module *get_module(struct symbolizer *s, const char *path, const char *build_id)
{
	struct module *m;

	for (m = s->modules; m; m = m->next)
		if (!strcmp(m->path, path) && !strcmp(m->build_id, build_id))
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	snprintf(m->build_id, sizeof(m->build_id), "%s", build_id);
	open_module(s, m);
	m->next = s->modules;
	s->modules = m;
	return m;
}

/* ELF virtual address of runtime @addr in mapping @map of module @m. */
static int to_elf_addr(struct module *m, const struct mapping *map, uint64_t addr, uint64_t *out)
{
	const struct elf_segment *seg;
	GElf_Addr bias;
	Elf *elf;

	if (!m->segs.v) {
		elf = dwfl_module_getelf(m->mod, &bias);
		if (!elf || elf_segments__read(elf, &m->segs))
			return -EINVAL;
	}
	/* The segment holding the mapping's start; the address may lie past it. */
	seg = elf_segments__by_offset(&m->segs, map->offset);
	if (!seg)
		return -ERANGE;
	*out = elf_segment__vaddr(seg, addr - map->start + map->offset);
	return 0;
}

static const char *keep_demangled(struct symbolizer *s, const char *name)
{
	int st = -1;
	char *d;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return name;
	d = __cxa_demangle(name, NULL, NULL, &st);
	if (!d || st)
		return name;
	if (s->nstrings == s->capstrings) {
		size_t cap = s->capstrings ? s->capstrings * 2 : 64;
		char **v = realloc(s->strings, cap * sizeof(*v));

		if (!v) {
			free(d);
			return name;
		}
		s->strings = v;
		s->capstrings = cap;
	}
	s->strings[s->nstrings++] = d;
	return d;
}

/* DW_AT_call_file/DW_AT_call_line of an inlined_subroutine DIE. */
static void call_site(Dwarf_Die *die, Dwarf_Die *cu, const char **file, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v) == 0)
		*line = (int)v;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &v) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
}

/*
 * Functions inlined at @look: the innermost at the line table's file:line,
 * each outer one at the call site of the one inside it, ending with the
 * real function, whose location becomes the frame's (eu-addr2line -i).
 */
static void inline_chain(struct module *m, uint64_t look, struct sym_frame *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, look, &bias), *scopes = NULL, *chain = NULL;
	const char *file = out->file;
	int n, nchain, line = out->line, first = -1;

	if (!cu)
		return;
	/*
	 * The innermost function scope at the address. Past an inlined
	 * instance dwarf_getscopes goes on into its abstract definition, so
	 * the chain of callers is taken from the concrete tree instead.
	 */
	n = dwarf_getscopes(cu, look - bias, &scopes);
	for (int i = 0; i < n && first < 0; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine)
			first = i;
		else if (tag == DW_TAG_subprogram)
			break;
	}
	nchain = first < 0 ? 0 : dwarf_getscopes_die(&scopes[first], &chain);
	for (int i = 0; i < nchain; i++) {
		int tag = dwarf_tag(&chain[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		if (out->ninline < SYM_MAX_INLINE) {
			struct sym_inline *in = &out->inl[out->ninline++];

			in->func = dwarf_diename(&chain[i]);
			in->file = file;
			in->line = line;
		}
		call_site(&chain[i], cu, &file, &line);
	}
	free(chain);
	free(scopes);
	out->file = file;
	out->line = line;
}

/* Name @out->elf_addr in module @m. */
static void lookup_in(struct symbolizer *s, struct module *m, bool is_return, struct sym_frame *out)
{
	GElf_Off off;
	GElf_Sym sym;
	Dwfl_Line *line;
	const char *name;
	uint64_t look;

	/* A return address belongs to the call before it. */
	look = is_return && out->elf_addr ? out->elf_addr - 1 : out->elf_addr;
	name = dwfl_module_addrinfo(m->mod, look, &off, &sym, NULL, NULL, NULL);
	if (!name) {
		out->status = SYM_NO_SYMBOL;
		return;
	}
	out->func = keep_demangled(s, name);
	out->func_off = off + (look != out->elf_addr);
	line = dwfl_module_getsrc(m->mod, look);
	if (line) {
		int lineno = 0;

		out->file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		out->line = lineno;
	}
	inline_chain(m, look, out);
}

/* lookup_in through the cache; every string it holds outlives it. */
static void cached_lookup(struct symbolizer *s, struct module *m, bool is_return,
			  struct sym_frame *out)
{
	uint64_t h = (out->elf_addr ^ (uintptr_t)m) * 0x9e3779b97f4a7c15ULL;
	struct cache_slot *c = &s->cache[(h >> 40) % CACHE_SLOTS];

	if (c->mod == m && c->elf_addr == out->elf_addr && c->is_return == is_return) {
		s->hits++;
		*out = c->frame;
		return;
	}
	s->misses++;
	lookup_in(s, m, is_return, out);
	c->mod = m;
	c->elf_addr = out->elf_addr;
	c->is_return = is_return;
	c->frame = *out;
}

int symbolizer__lookup(struct symbolizer *s, const struct mapping *map, uint64_t addr,
		       bool is_return, struct sym_frame *out)
{
	struct module *m;

	memset(out, 0, sizeof(*out));
	if (!map) {
		out->status = SYM_UNMAPPED;
		return 0;
	}
	m = get_module(s, map->path, map->build_id);
	if (!m)
		return -ENOMEM;
	out->module = m->path;
	out->status = m->status;
	if (m->status != SYM_OK)
		return 0;
	if (to_elf_addr(m, map, addr, &out->elf_addr)) {
		out->status = SYM_NO_SYMBOL;
		return 0;
	}
	cached_lookup(s, m, is_return, out);
	return 0;
}

int symbolizer__lookup_elf(struct symbolizer *s, const char *path, uint64_t elf_addr,
			   bool is_return, struct sym_frame *out)
{
	struct module *m = get_module(s, path, "-");

	memset(out, 0, sizeof(*out));
	if (!m)
		return -ENOMEM;
	out->module = m->path;
	out->status = m->status;
	out->elf_addr = elf_addr;
	if (m->status == SYM_OK)
		cached_lookup(s, m, is_return, out);
	return 0;
}

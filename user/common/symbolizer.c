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
#include <fcntl.h>
#include <gelf.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "debuginfod.h"
#include "elfseg.h"
#include "htab.h"
#include "modfind.h"
#include "symbolizer.h"
#include "text.h"

/* C++ names: libstdc++'s demangler (the one eu-addr2line uses too). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct module {
	char *path;		/* as recorded */
	char build_id[BUILD_ID_HEX_SIZE];
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct elf_segments segs;	/* of the file found, for to_elf_addr() */
	enum sym_status status;	/* SYM_OK if usable */
	bool trusted;		/* the user's own path (-e): not a log's */
	bool by_build_id;	/* its path not there (or not it): found by build ID */
	uint64_t frames;	/* frames looked up in it */
	uint64_t first_off;	/* the first one's offset in the file */
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
	uint64_t looked, named;	/* symbolizer__counts() */
	char *sysroot;
	int root_fd;		/* --sysroot opened O_PATH, or -1 */
	bool no_local_files;
	bool symbol_versions;	/* names keep their "@@GLIBC_2.2.5" */
	char *debuginfo_path;
	/* Where files are found by build ID (modfind.h): --debug-dir, the sysroot's, ours. */
	char *debug_dir, *root_debug;
	const char *id_dirs[3];
	Dwfl_Callbacks cb;
	struct htab *modules;	/* (path, build ID) -> struct module */
	char **strings;		/* demangled names, freed at the end */
	size_t nstrings, capstrings;
};

const char *sym_status_str(enum sym_status st)
{
	switch (st) {
	case SYM_OK: return "ok";
	case SYM_NO_SYMBOL: return "no symbol";
	case SYM_NO_FILE: return "module file not found";
	case SYM_NOT_OPENED: return "module file not opened: --no-local-files";
	case SYM_NOT_REGULAR: return "module path is not a regular file";
	case SYM_BUILD_ID_MISMATCH: return "build ID mismatch: file differs from the traced one";
	case SYM_UNMAPPED: return "not in any mapping";
	case SYM_NO_FRAME: return "interpreter frame without its frame record";
	}
	return "?";
}

/* Modules by (path, build ID, trusted): a stranger's log may name thousands. */
struct module_key {
	const char *path, *build_id;
	bool trusted;
};

static uint64_t hash_str(uint64_t h, const char *p)
{
	while (*p)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3ULL;
	return h;
}

static bool module_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct module *m = (const struct module *)stored;
	const struct module_key *k = (const struct module_key *)probe;

	(void)ctx;
	return m->trusted == k->trusted && !strcmp(m->path, k->path) &&
	       !strcmp(m->build_id, k->build_id);
}

/*
 * libdwfl's search for a module's separate debug info (build ID under the
 * debug directories, .gnu_debuglink), then debuginfod by the module's
 * build ID through its client program (debuginfod.h): libdwfl's own
 * client is a library it dlopens, which the static binaries refuse.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int fd, n;

	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					  debuglink_file, debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	return n > 0 ? debuginfod__find(bits, n, debuginfo_file_name) : -1;
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->root_fd = -1;
	s->cache = calloc(CACHE_SLOTS, sizeof(*s->cache));
	s->modules = htab__new(64, module_equal, NULL);
	if (!s->cache || !s->modules)
		goto fail;
	if (opts && opts->sysroot) {
		s->sysroot = strdup(opts->sysroot);
		if (!s->sysroot)
			goto fail;
		/* Not there: every module is then "not found", as before. */
		s->root_fd = open(opts->sysroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	s->no_local_files = opts && opts->no_local_files;
	/*
	 * Absolute: libdwfl looks for DIR/.build-id/xx/rest.debug only under
	 * an absolute DIR (a relative one it takes as the module's own
	 * directory's subdirectory, .debug's way).
	 */
	if (opts && opts->debug_dir && !(s->debug_dir = realpath(opts->debug_dir, NULL)) &&
	    !(s->debug_dir = strdup(opts->debug_dir)))
		goto fail;
	if (s->sysroot && asprintf(&s->root_debug, "%s/usr/lib/debug", s->sysroot) < 0) {
		s->root_debug = NULL;
		goto fail;
	}
	s->id_dirs[0] = s->debug_dir;
	s->id_dirs[1] = s->root_debug;
	s->id_dirs[2] = "/usr/lib/debug";
	s->symbol_versions = opts && opts->symbol_versions;
	/* libdwfl's search path: "-" = no CRC check, then .debug dirs. */
	if (asprintf(&s->debuginfo_path, "-%s%s:.debug:/usr/lib/debug",
		     s->debug_dir ? ":" : "", s->debug_dir ? s->debug_dir : "") < 0) {
		s->debuginfo_path = NULL;
		goto fail;
	}
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	return s;
fail:
	symbolizer__free(s);
	return NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	struct module *m;
	size_t pos = 0;

	if (!s)
		return;
	while (s->modules && (m = htab__next(s->modules, &pos, NULL))) {
		if (m->dwfl)
			dwfl_end(m->dwfl);
		elf_segments__free(&m->segs);
		free(m->path);
		free(m);
	}
	htab__free(s->modules);
	for (size_t i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->debuginfo_path);
	free(s->debug_dir);
	free(s->root_debug);
	free(s->sysroot);
	if (s->root_fd >= 0)
		close(s->root_fd);
	free(s->cache);
	free(s);
}

/*
 * A path as a process's maps name it: absolute, no "." or ".." component.
 * Anything else came from a log written by hand (path=/../../etc/shadow).
 */
static bool plain_path(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p; (c = strchr(c, '/')); c++)
		if ((c[1] == '.' && (c[2] == '/' || !c[2])) ||
		    (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	return true;
}

/*
 * The file a log names, as a path to no one's harm: found without opening
 * it (O_PATH), under the sysroot by the kernel's own resolution
 * (openat2 RESOLVE_IN_ROOT: "..", absolute symbolic links and mount
 * crossings stay inside), opened only if it is a regular file, and then
 * without blocking. Returns the read-only fd with its real name in @real,
 * or -1 with @m->status saying why not.
 */
static int open_hostile(struct symbolizer *s, struct module *m, char *real, size_t cap)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char self[64];
	struct stat st;
	ssize_t n;
	int pfd, fd;

	m->status = SYM_NO_FILE;
	if (m->trusted) {
		/* The user's own argument (-e FILE): relative to the cwd, as addr2line's. */
		pfd = open(m->path, O_PATH | O_CLOEXEC);
	} else if (!plain_path(m->path)) {
		return -1;
	} else if (s->sysroot) {
		if (s->root_fd < 0)
			return -1;
		pfd = (int)syscall(SYS_openat2, s->root_fd, m->path, &how, sizeof(how));
	} else if (s->no_local_files) {
		m->status = SYM_NOT_OPENED;
		return -1;
	} else {
		pfd = open(m->path, O_PATH | O_CLOEXEC);
	}
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode)) {
		m->status = SYM_NOT_REGULAR;
		close(pfd);
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	n = readlink(self, real, cap - 1);
	close(pfd);
	if (fd < 0 || n <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	real[n] = '\0';
	return fd;
}

static void open_module(struct symbolizer *s, struct module *m)
{
	char file[4096];
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n, fd;

	fd = open_hostile(s, m, file, sizeof(file));
	if (fd < 0 && !m->trusted && strcmp(m->build_id, "-")) {
		/* Not where the log says (another machine): the file of its build ID. */
		fd = modfind__by_build_id(s->id_dirs, 3, m->build_id, "", file, sizeof(file));
		m->by_build_id = fd >= 0;
	}
	if (fd < 0)
		return;
	m->status = SYM_NO_FILE;
	m->dwfl = dwfl_begin(&s->cb);
	if (!m->dwfl) {
		close(fd);
		return;
	}
	/*
	 * On success libdwfl owns @fd; @file (the real path, inside the
	 * sysroot) is where it looks for .gnu_debuglink files.
	 */
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, m->path, file, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		close(fd);
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

static struct module *get_module(struct symbolizer *s, const char *path, const char *build_id,
				 bool trusted)
{
	struct module_key k = { path, build_id, trusted };
	uint64_t h = hash_str(hash_str(0xcbf29ce484222325ULL, path), build_id) ^ trusted;
	struct module *m = htab__find(s->modules, h, (uintptr_t)&k);

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path || htab__add(s->modules, h, (uintptr_t)m, m)) {
		free(m->path);
		free(m);
		return NULL;
	}
	snprintf(m->build_id, sizeof(m->build_id), "%s", build_id);
	m->trusted = trusted;
	open_module(s, m);
	return m;
}

/* @hex (a build ID's, checked by modfind) as bytes into @out; their count. */
static int hex_bytes(const char *hex, unsigned char *out)
{
	int n = 0;

	for (; hex[0] && hex[1] && n < BUILD_ID_MAX; hex += 2)
		out[n++] = (unsigned char)((hex[0] <= '9' ? hex[0] - '0' : hex[0] - 'a' + 10) << 4 |
					   (hex[1] <= '9' ? hex[1] - '0' : hex[1] - 'a' + 10));
	return n;
}

int symbolizer__module_files(struct symbolizer *s, const char *path, const char *build_id,
			     int *fd, int *debug_fd, enum sym_status *why)
{
	struct module m = { .path = (char *)path };
	unsigned char id[BUILD_ID_MAX];
	char real[4096], got[BUILD_ID_HEX_SIZE];
	char *dpath = NULL;
	bool known = strcmp(build_id, "-") != 0;

	*debug_fd = -1;
	*fd = open_hostile(s, &m, real, sizeof(real));
	*why = *fd < 0 ? m.status : SYM_OK;
	/* A file of the path, not the traced one: never used. */
	if (*fd >= 0 && known && (modfind__build_id(*fd, got) || strcmp(got, build_id))) {
		close(*fd);
		*fd = -1;
		*why = SYM_BUILD_ID_MISMATCH;
	}
	if (*fd < 0 && known)
		*fd = modfind__by_build_id(s->id_dirs, 3, build_id, "", NULL, 0);
	if (*fd < 0)
		return -ENOENT;
	*why = SYM_OK;
	if (!known)
		return 0;
	*debug_fd = modfind__by_build_id(s->id_dirs, 3, build_id, ".debug", NULL, 0);
	if (*debug_fd < 0)
		*debug_fd = debuginfod__find(id, hex_bytes(build_id, id), &dpath);
	free(dpath);
	return 0;
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

/* Keep @d (malloc'ed) until symbolizer__free; NULL: no memory (@d freed). */
static const char *keep_string(struct symbolizer *s, char *d)
{
	if (s->nstrings == s->capstrings) {
		size_t cap = s->capstrings ? s->capstrings * 2 : 64;
		char **v = realloc(s->strings, cap * sizeof(*v));

		if (!v) {
			free(d);
			return NULL;
		}
		s->strings = v;
		s->capstrings = cap;
	}
	s->strings[s->nstrings++] = d;
	return d;
}

/*
 * Symbol @name as every output shows it: without the ELF symbol version
 * a symbol table may append ("malloc@@GLIBC_2.2.5": malloc), unless
 * asked for, and demangled (the version cut first: the demangler refuses
 * "_Z...@@GLIBCXX_3.4"). The name itself when neither applies, or when
 * there is no memory.
 */
static const char *keep_name(struct symbolizer *s, const char *name)
{
	size_t len = name ? symbol_unversioned_len(name) : 0;
	const char *kept;
	char *bare, *d, *v;
	int st = -1;

	if (!name || (!name[len] && (name[0] != '_' || name[1] != 'Z')))
		return name;
	bare = strndup(name, len);
	if (!bare)
		return name;
	d = bare[0] == '_' && bare[1] == 'Z' ? __cxa_demangle(bare, NULL, NULL, &st) : NULL;
	if (d && !st) {
		free(bare);
		bare = d;
	} else {
		free(d);
	}
	/* -v: the version back, after the demangled name. */
	if (s->symbol_versions && name[len]) {
		if (asprintf(&v, "%s%s", bare, name + len) < 0)
			v = NULL;
		free(bare);
		if (!v)
			return name;
		bare = v;
	}
	kept = keep_string(s, bare);
	return kept ? kept : name;
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
	out->func = keep_name(s, name);
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

/* A lookup in a module a file was looked for (not --no-local-files'), and whether it named. */
static void count(struct symbolizer *s, const struct sym_frame *out)
{
	if (out->status == SYM_NOT_OPENED)
		return;
	s->looked++;
	s->named += out->status == SYM_OK;
}

void symbolizer__counts(const struct symbolizer *s, uint64_t *looked, uint64_t *named)
{
	*looked = s->looked;
	*named = s->named;
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
	m = get_module(s, map->path, map->build_id, false);
	if (!m)
		return -ENOMEM;
	out->module = m->path;
	out->status = m->status;
	out->file_off = addr - map->start + map->offset;
	if (!m->frames++)
		m->first_off = out->file_off;
	if (m->status == SYM_OK && to_elf_addr(m, map, addr, &out->elf_addr))
		out->status = SYM_NO_SYMBOL;
	else if (m->status == SYM_OK)
		cached_lookup(s, m, is_return, out);
	count(s, out);
	return 0;
}

int symbolizer__lookup_elf(struct symbolizer *s, const char *path, uint64_t elf_addr,
			   bool is_return, struct sym_frame *out)
{
	struct module *m = get_module(s, path, "-", true);

	memset(out, 0, sizeof(*out));
	if (!m)
		return -ENOMEM;
	out->module = m->path;
	out->status = m->status;
	out->elf_addr = elf_addr;
	out->file_off = elf_addr;
	if (!m->frames++)
		m->first_off = elf_addr;
	if (m->status == SYM_OK)
		cached_lookup(s, m, is_return, out);
	count(s, out);
	return 0;
}

bool symbolizer__next_missing(struct symbolizer *s, size_t *pos, struct sym_missing *out)
{
	struct module *m;

	while ((m = htab__next(s->modules, pos, NULL))) {
		if (m->status != SYM_NO_FILE && m->status != SYM_BUILD_ID_MISMATCH)
			continue;
		*out = (struct sym_missing){ m->path, m->build_id, m->status, m->first_off };
		return true;
	}
	return false;
}

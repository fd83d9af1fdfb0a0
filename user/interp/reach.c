// SPDX-License-Identifier: MIT
/*
 * reach.c - whether a command may run an interpreter, from its ELF file's
 * dynamic section and dynamic symbols (see reach.h), through libelf.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/reach.h"

/* Libraries that neither run nor load another program, nor embed an interpreter. */
static const char *const runtime_libs[] = {
	"libc.so.6", "libm.so.6", "libmvec.so.1", "libpthread.so.0", "librt.so.1",
	"libdl.so.2", "libstdc++.so.6", "libgcc_s.so.1", "libatomic.so.1",
	"ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
};

/* Imports by which a process runs another program or loads a library. */
static const char *const spawning[] = {
	"execl", "execle", "execlp", "execv", "execve", "execvp", "execvpe", "fexecve",
	"execveat", "posix_spawn", "posix_spawnp", "system", "popen", "wordexp",
	"dlopen", "dlmopen", "syscall",
};

/* Defined by an interpreter, or a program that embeds one. */
static const char *const interpreters[] = {
	"Py_Initialize", "Py_InitializeEx", "Py_Main", "Py_BytesMain", "_PyRuntime",
	"lua_newstate", "luaL_newstate", "luaJIT_setmode",
};

static bool listed(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

#define LISTED(name, list) listed(name, list, sizeof(list) / sizeof(list[0]))

/* Does the dynamic section @scn need a library beyond runtime_libs? Which, into @why. */
static bool scan_dynamic(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, char *why, size_t cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Dyn dyn;
		const char *name;

		if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
			continue;
		name = elf_strptr(e, sh->sh_link, dyn.d_un.d_val);
		if (!name || !LISTED(name, runtime_libs)) {
			snprintf(why, cap, "it needs %s", name ? name : "a library");
			return true;
		}
	}
	return false;
}

/*
 * Does symbol table @scn (.dynsym, .symtab) import a spawning function or
 * define an interpreter's? Which, into @why.
 */
static bool scan_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, char *why, size_t cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 1; d && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || !(name = elf_strptr(e, sh->sh_link, sym.st_name)))
			continue;
		if (sym.st_shndx == SHN_UNDEF && LISTED(name, spawning)) {
			snprintf(why, cap, "it imports %s", name);
			return true;
		}
		if (sym.st_shndx != SHN_UNDEF && LISTED(name, interpreters)) {
			snprintf(why, cap, "it defines %s", name);
			return true;
		}
	}
	return false;
}

/* May the program in ELF @e run an interpreter? Why, into @why. */
static bool scan(Elf *e, char *why, size_t cap)
{
	bool dynamic = false, interp = false;
	Elf_Scn *scn = NULL;
	size_t nph;

	if (elf_kind(e) != ELF_K_ELF) {
		snprintf(why, cap, "it is not an ELF file (a script?)");
		return true;
	}
	if (elf_getphdrnum(e, &nph))
		nph = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		interp |= gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNAMIC) {
			dynamic = true;
			if (scan_dynamic(e, scn, &sh, why, cap))
				return true;
		} else if ((sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB) &&
			   scan_symbols(e, scn, &sh, why, cap)) {
			return true;
		}
	}
	if (!dynamic || !interp) {
		snprintf(why, cap, "it is statically linked");
		return true;
	}
	return false;
}

bool interp_reach__may_run(const char *path, char *why, size_t cap)
{
	const char *preload = getenv("LD_PRELOAD"), *audit = getenv("LD_AUDIT");
	bool may = true;
	Elf *e;
	int fd;

	if ((preload && *preload) || (audit && *audit)) {
		snprintf(why, cap, "LD_PRELOAD or LD_AUDIT is set");
		return true;
	}
	snprintf(why, cap, "its file cannot be read");
	if (elf_version(EV_CURRENT) == EV_NONE)
		return true;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e) {
		may = scan(e, why, cap);
		elf_end(e);
	}
	close(fd);
	return may;
}

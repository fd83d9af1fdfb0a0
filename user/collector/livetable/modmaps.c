// SPDX-License-Identifier: MIT
/*
 * modmaps.c - the loaded objects' executable segments from
 * dl_iterate_phdr (modmaps.h), as `map` records describe them: a
 * segment's start and offset rounded down to its page as /proc/PID/maps
 * shows them, so heapdecode's address arithmetic (docs/OUTPUT.md)
 * applies unchanged.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "modmaps.h"

struct modmaps_ctx {
	int (*fn)(void *arg, const struct modmap_seg *seg);
	void *arg;
	int ret;
	char exe[PATH_MAX];
	char main[PATH_MAX];	/* the program's own file */
	char obj[PATH_MAX];	/* an object's file as /proc/self/maps names it */
};

/* The GNU build ID in the PT_NOTE segments of @info as hex into @hex. */
static void build_id_of(const struct dl_phdr_info *info, char *hex)
{
	build_id_hex(NULL, 0, hex);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const char *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= BUILD_ID_MAX) {
				build_id_hex((const uint8_t *)desc, (int)nh->n_descsz, hex);
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/*
 * The file mapped at @addr, from /proc/self/maps, into @path; false if
 * none. The program's own object has no name in dl_iterate_phdr, and
 * /proc/self/exe is the dynamic loader when that was run as a command
 * (ld.so PROG, as tests/collector/test_preload_oldlibc.sh does).
 */
static bool mapped_path(uintptr_t addr, char *path, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t len = 0;
	bool found = false;

	while (f && !found && getline(&line, &len, f) > 0) {
		unsigned long lo, hi;
		int at = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || !at ||
		    addr < lo || addr >= hi || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		found = (size_t)snprintf(path, cap, "%s", line + at) < cap;
	}
	free(line);
	if (f)
		fclose(f);
	return found;
}

/* Is @path as /proc/PID/maps names files: absolute, no "." or ".." component? */
static bool plain_path(const char *path)
{
	if (path[0] != '/')
		return false;
	for (const char *p = path; (p = strchr(p, '/')) != NULL; p++) {
		size_t n = strcspn(p + 1, "/");

		if ((n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return false;
	}
	return true;
}

/*
 * The file of @info's executable segments as /proc/self/maps names
 * it, into @path (@cap bytes); false if none.
 */
static bool object_path(const struct dl_phdr_info *info, char *path, size_t cap)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    mapped_path(info->dlpi_addr + ph->p_vaddr, path, cap))
			return true;
	}
	return false;
}

static int one_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct modmaps_ctx *c = arg;
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const char *path = info->dlpi_name;
	struct modmap_seg r;

	(void)size;
	if (!path || !*path) {
		path = object_path(info, c->main, sizeof(c->main)) ? c->main : c->exe;
	} else if (strstr(path, "linux-vdso") || strstr(path, "linux-gate")) {
		path = "[vdso]";
	} else if (!plain_path(path) && object_path(info, c->obj, sizeof(c->obj))) {
		/*
		 * Loaded by a name the loader made ($ORIGIN/../lib/libpython3.12.so
		 * of python-build-standalone and pyenv: "bin/../lib"): the file's
		 * own name, which heapdecode takes (it refuses ".." as hostile).
		 */
		path = c->obj;
	}
	r.path = path;
	build_id_of(info, r.build_id);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		r.start = start & ~(page - 1);
		r.end = (start + ph->p_memsz + page - 1) & ~(page - 1);
		r.off = ph->p_offset & ~(page - 1);
		c->ret = c->fn(c->arg, &r);
		if (c->ret)
			return c->ret;
	}
	return 0;
}

int modmaps__each(int (*fn)(void *arg, const struct modmap_seg *seg), void *arg)
{
	struct modmaps_ctx c = { .fn = fn, .arg = arg };
	ssize_t n = readlink("/proc/self/exe", c.exe, sizeof(c.exe) - 1);

	c.exe[n > 0 ? n : 0] = '\0';
	/* No /proc: the name the program was executed by, made absolute. */
	if (n <= 0 && getauxval(AT_EXECFN) && !realpath((const char *)getauxval(AT_EXECFN), c.exe))
		c.exe[0] = '\0';
	dl_iterate_phdr(one_object, &c);
	return c.ret;
}

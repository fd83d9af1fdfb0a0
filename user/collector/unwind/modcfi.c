// SPDX-License-Identifier: MIT
/*
 * modcfi.c - the CFI of modules .eh_frame_hdr does not index (see
 * modcfi.h): per module, its file's section headers read once (the ELF
 * format: elf(5), the System V gABI's section header table), its
 * .eh_frame (as loaded) and .debug_frame (mapped from the file) indexed by
 * ehframe__scan() and a heap sort (the C library's qsort may call malloc,
 * and this runs inside it). Tables live until the module at their address
 * changes (its name and loadable segments, hashed), then are built again;
 * every use is under the loader's lock and this file's try-lock, so a
 * table is never unmapped while read.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "modcfi.h"

struct table {
	uintptr_t base;		/* dlpi_addr */
	uint64_t ident;		/* module_ident() */
	struct ls_index eh, debug;	/* n 0: none */
	void *debug_map;	/* the file's pages holding .debug_frame */
	size_t debug_map_len, eh_fde_len, debug_fde_len;
};

static struct table tables[MODCFI_MODULES];
static unsigned int ntables;
static atomic_flag busy = ATOMIC_FLAG_INIT;
static struct modcfi_stats st;

/* FNV-1a over @n bytes from @h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
	return h;
}

/* What identifies a loaded module at its address: its name and PT_LOADs. */
static uint64_t module_ident(const struct dl_phdr_info *info)
{
	uint64_t h = 0xcbf29ce484222325ull;

	if (info->dlpi_name)
		h = fnv(h, info->dlpi_name, strlen(info->dlpi_name));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD) {
			h = fnv(h, &ph->p_vaddr, sizeof(ph->p_vaddr));
			h = fnv(h, &ph->p_memsz, sizeof(ph->p_memsz));
		}
	}
	return h;
}

/*
 * A bound passed: said once a process on standard error (one write, no
 * stdio: inside malloc), as the frames past it will be cut, unreadable.
 */
static void say_over(void)
{
	static bool said;
	static const char msg[] = "heapsnoop-preload: the collector's index of CFI without "
				  ".eh_frame_hdr is full (64 modules, 2^20 FDEs a section): "
				  "stacks through code past it are cut, marked unreadable\n";

	if (said)
		return;
	said = true;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		return;
}

static void table_free(struct table *t)
{
	if (t->eh.fde)
		munmap((void *)t->eh.fde, t->eh_fde_len);
	if (t->debug.fde)
		munmap((void *)t->debug.fde, t->debug_fde_len);
	if (t->debug_map)
		munmap(t->debug_map, t->debug_map_len);
	memset(t, 0, sizeof(*t));
}

static bool pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	return syscall(SYS_pread64, fd, buf, n, (off_t)off) == (long)n;
}

/* Is the file at @fd the module @info describes: the same PT_LOADs, in order? */
static bool file_matches(int fd, const ElfW(Ehdr) *eh, const struct dl_phdr_info *info)
{
	int j = 0;

	if (eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum > 256)
		return false;
	for (int i = 0; i < eh->e_phnum; i++) {
		ElfW(Phdr) ph;

		if (!pread_all(fd, &ph, sizeof(ph), eh->e_phoff + (uint64_t)i * sizeof(ph)))
			return false;
		if (ph.p_type != PT_LOAD)
			continue;
		while (j < info->dlpi_phnum && info->dlpi_phdr[j].p_type != PT_LOAD)
			j++;
		if (j == info->dlpi_phnum || info->dlpi_phdr[j].p_vaddr != ph.p_vaddr ||
		    info->dlpi_phdr[j].p_memsz != ph.p_memsz)
			return false;
		j++;
	}
	return true;
}

/* Is [@addr, @addr + @len) within one loaded, readable segment's file bytes? */
static bool loaded(const struct dl_phdr_info *info, uintptr_t addr, uint64_t len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && addr >= s &&
		    len <= ph->p_filesz && addr - s <= ph->p_filesz - len)
			return true;
	}
	return false;
}

/* Heap sort of @n FDEs by start: no allocation, no recursion. */
static void fde_sort(struct ls_fde *a, uint64_t n)
{
	for (uint64_t end = n, start = n / 2;;) {
		uint64_t root, child;
		struct ls_fde tmp;

		if (start > 0) {
			start--;
		} else if (end > 1) {
			end--;
			tmp = a[0];
			a[0] = a[end];
			a[end] = tmp;
		} else {
			return;
		}
		for (root = start; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && a[child + 1].start > a[child].start)
				child++;
			if (a[root].start >= a[child].start)
				break;
			tmp = a[root];
			a[root] = a[child];
			a[child] = tmp;
		}
	}
}

/* @x's index of its section's FDEs, in memory from mmap: 0, or -EINVAL, -ENOMEM. */
static int index_build(struct ls_index *x, size_t *map_len)
{
	int64_t n = ehframe__scan(x->sec, x->len, x->bias, x->debug, NULL, 0);
	struct ls_fde *fde;

	if (n < 0) {
		st.bad++;
		return -EINVAL;
	}
	if (!n)
		return 0;
	if (n > MODCFI_FDES) {
		st.over += (uint64_t)n - MODCFI_FDES;
		n = MODCFI_FDES;
		say_over();
	}
	*map_len = (size_t)n * sizeof(*fde);
	fde = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fde == MAP_FAILED)
		return -ENOMEM;
	ehframe__scan(x->sec, x->len, x->bias, x->debug, fde, (uint64_t)n);
	fde_sort(fde, (uint64_t)n);
	x->fde = fde;
	x->n = (uint64_t)n;
	st.fdes += (uint64_t)n;
	st.bytes += *map_len;
	return 0;
}

/*
 * A section's name, @want (".eh_frame", ".debug_frame"), at @off of the
 * section name table: read 16 bytes at most, compared whole.
 */
static bool name_is(int fd, uint64_t off, const char *want)
{
	char buf[16];
	size_t n = strlen(want) + 1;

	return n <= sizeof(buf) && pread_all(fd, buf, n, off) && !memcmp(buf, want, n);
}

/* Build @t's tables from the module's file: its sections found, indexed. */
static void table_build(struct table *t, const struct dl_phdr_info *info, bool has_hdr)
{
	const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
	ElfW(Shdr) strtab, sh;
	ElfW(Ehdr) eh;
	int fd;

	/* The system calls themselves: an open() interposed may allocate, and this is inside malloc. */
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	st.modules++;
	if (!pread_all(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_shentsize != sizeof(sh) || eh.e_shstrndx >= eh.e_shnum || !file_matches(fd, &eh, info) ||
	    !pread_all(fd, &strtab, sizeof(strtab), eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof(sh))) {
		st.bad++;
		goto out;
	}
	for (unsigned int i = 1; i < eh.e_shnum; i++) {
		if (!pread_all(fd, &sh, sizeof(sh), eh.e_shoff + (uint64_t)i * sizeof(sh)))
			break;
		/* lld types .eh_frame SHT_X86_64_UNWIND (LLVM's own libraries do). */
		if ((sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) || !sh.sh_size ||
		    sh.sh_name >= strtab.sh_size)
			continue;
		if (!has_hdr && !t->eh.sec && name_is(fd, strtab.sh_offset + sh.sh_name, ".eh_frame")) {
			uintptr_t at = info->dlpi_addr + sh.sh_addr;

			if (!loaded(info, at, sh.sh_size)) {
				st.bad++;
				continue;
			}
			t->eh = (struct ls_index){ .sec = (const uint8_t *)at, .len = sh.sh_size };
			if (index_build(&t->eh, &t->eh_fde_len) || !t->eh.n)
				t->eh.n = 0;
			else
				st.eh_indexed++;
		} else if (!t->debug_map && name_is(fd, strtab.sh_offset + sh.sh_name, ".debug_frame")) {
			uint64_t pg = getauxval(AT_PAGESZ) ? getauxval(AT_PAGESZ) : 4096;
			uint64_t skip = sh.sh_offset & (pg - 1);
			void *map;

			if (sh.sh_flags & SHF_COMPRESSED) {
				st.compressed++;
				continue;
			}
			map = mmap(NULL, sh.sh_size + skip, PROT_READ, MAP_PRIVATE, fd,
				   (off_t)(sh.sh_offset - skip));
			if (map == MAP_FAILED)
				continue;
			t->debug_map = map;
			t->debug_map_len = sh.sh_size + skip;
			t->debug = (struct ls_index){ .sec = (const uint8_t *)map + skip,
						      .len = sh.sh_size,
						      .bias = info->dlpi_addr,
						      .debug = true };
			if (index_build(&t->debug, &t->debug_fde_len) || !t->debug.n)
				t->debug.n = 0;
			else
				st.debug_indexed++;
		}
	}
out:
	syscall(SYS_close, fd);
}

/* @t's table for the module, found or made; NULL when all are taken. */
static struct table *table_get(const struct dl_phdr_info *info, bool has_hdr)
{
	uint64_t ident = module_ident(info);
	struct table *t = NULL;

	for (unsigned int i = 0; i < ntables; i++) {
		if (tables[i].base != info->dlpi_addr)
			continue;
		if (tables[i].ident == ident)
			return &tables[i];
		/* Another module at its address since: built again. */
		t = &tables[i];
		table_free(t);
		break;
	}
	if (!t) {
		if (ntables == MODCFI_MODULES) {
			st.over++;
			say_over();
			return NULL;
		}
		t = &tables[ntables++];
	}
	t->base = info->dlpi_addr;
	t->ident = ident;
	table_build(t, info, has_hdr);
	return t;
}

int modcfi__rule(const struct dl_phdr_info *info, bool has_hdr, uintptr_t addr, uintptr_t pc,
		 struct ls_rule *r)
{
	int saved = errno, err = -ENOENT;
	struct table *t;

	if (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) {
		st.busy++;
		return -EBUSY;
	}
	t = table_get(info, has_hdr);
	if (t && t->eh.n) {
		struct ls_module mod = { .idx = &t->eh };

		err = ehframe__rule(&mod, addr, pc, r);
	}
	if (t && t->debug.n && err == -ENOENT) {
		struct ls_module mod = { .idx = &t->debug };

		err = ehframe__rule(&mod, addr, pc, r);
	}
	atomic_flag_clear_explicit(&busy, memory_order_release);
	errno = saved;
	return err;
}

void modcfi__stats(struct modcfi_stats *out)
{
	*out = st;
}

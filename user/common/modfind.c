// SPDX-License-Identifier: MIT
/* modfind.c - a module's files by build ID (see modfind.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modfind.h"

int modfind__build_id(int fd, char *hex)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	int ret = -ENOENT;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOENT;
	}
	while (ret && (scn = elf_nextscn(elf, scn)) != NULL) {
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;
		GElf_Shdr sh;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) ||
			    !nh.n_descsz || nh.n_descsz > BUILD_ID_MAX)
				continue;
			build_id_hex((const uint8_t *)data->d_buf + desc_off, (int)nh.n_descsz, hex);
			ret = 0;
			break;
		}
	}
	elf_end(elf);
	return ret;
}

/* Hex digits, 4 to 2 * BUILD_ID_MAX of them, an even count: a name to build a path of. */
static bool plain_hex(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return !s[n] && n >= 4 && n <= 2 * BUILD_ID_MAX && !(n & 1);
}

int modfind__by_build_id(const char *const *dirs, int ndirs, const char *build_id,
			 const char *suffix, char *path, size_t cap)
{
	char buf[4096], got[BUILD_ID_HEX_SIZE];
	struct stat st;

	if (!plain_hex(build_id))
		return -1;
	for (int i = 0; i < ndirs; i++) {
		int fd;

		if (!dirs[i] || !dirs[i][0])
			continue;
		if (snprintf(buf, sizeof(buf), "%s/.build-id/%.2s/%s%s", dirs[i], build_id,
			     build_id + 2, suffix) >= (int)sizeof(buf))
			continue;
		fd = open(buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || modfind__build_id(fd, got) ||
		    strcmp(got, build_id)) {
			close(fd);
			continue;
		}
		if (path)
			snprintf(path, cap, "%s", buf);
		return fd;
	}
	return -1;
}

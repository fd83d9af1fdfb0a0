// SPDX-License-Identifier: MIT
/*
 * ljfind.c - LuaJIT's allocator in its file (see ljfind.h): lua_newstate's
 * code read from the file and decoded (ljdecode.h), lj_alloc_f's first
 * bytes given to probesite.h, which puts the probe past its `test
 * %rcx,%rcx` on the `je` the kernel emulates (Debian's build: lj_alloc_f
 * tests nsize, then ptr, and tail-jumps to free, malloc or realloc).
 */
#include <errno.h>
#include <string.h>

#include "arch/probesite.h"
#include "interp/luajit/ljdecode.h"
#include "interp/luajit/ljfind.h"
#include "maps/elffile.h"

/* lua_newstate's bytes read at most: Debian's is 0x4b0 long. */
#define NEWSTATE_MAX 4096

int lj_find__allocf(const char *path, struct lj_allocf *out)
{
	uint8_t code[NEWSTATE_MAX], head[96];
	struct elf_func fn;
	struct elf_file *ef;
	uint64_t off;
	ssize_t n;
	int err;

	memset(out, 0, sizeof(*out));
	err = elf_file__open(path, &ef);
	if (err)
		return err;
	err = elf_file__find_func(ef, "lua_newstate", &fn);
	if (err)
		goto out;
	n = elf_file__pread(ef, code, fn.size && fn.size < sizeof(code) ? fn.size : sizeof(code),
			    fn.offset);
	if (n <= 0) {
		err = n < 0 ? (int)n : -EIO;
		goto out;
	}
	err = ljdecode__allocf(code, (size_t)n, fn.addr, &out->addr, &out->gg_size);
	if (err)
		goto out;
	err = elf_file__offset_of(ef, out->addr, &off);
	if (err)
		goto out;
	/* lua_Alloc's ptr (%rsi) and nsize (%rcx) are read; no argument's NULL skips it. */
	n = elf_file__pread(ef, head, sizeof(head), off);
	if (n <= 0 || probesite__find(head, (size_t)n, out->addr, PS_ARG(1) | PS_ARG(3), -1,
				      &out->ps))
		memset(&out->ps, 0, sizeof(out->ps));
	out->site = off + out->ps.offset;
out:
	elf_file__close(ef);
	return err;
}

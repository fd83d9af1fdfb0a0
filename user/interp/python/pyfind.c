// SPDX-License-Identifier: MIT
/*
 * pyfind.c - a CPython in a binary, from the file (see pyfind.h): its
 * exported symbols (.dynsym: a stripped Debian binary keeps 2,211 of
 * them), its initialised data, its code (pydecode.h) and its CFI (the
 * FDE that covers the eval loop's .cold part: maps/ehfde.h).
 */
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "maps/ehfde.h"
#include "maps/elffile.h"
#include "interp/python/pydecode.h"
#include "interp/python/pyfind.h"
#include "arch/probesite.h"

/* Bytes of PyGILState_GetThisThreadState and PyObject_Malloc decoded. */
#define HEAD_BYTES 96
/* The eval loop is 55,644 bytes in 3.11.2 and 3.13's is bigger: read whole. */
#define EVAL_MAX (4u << 20)

__attribute__((format(printf, 3, 4)))
static int say(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return 0;
}

static int read_u64(struct elf_file *ef, uint64_t addr, uint64_t *v)
{
	return elf_file__read_addr(ef, addr, v, sizeof(*v));
}

struct cold_ctx {
	Elf *elf;
	Dwarf_CFI *cfi;
	struct py_image *img;
};

/*
 * A jump out of the eval loop: into the middle of another FDE, that FDE
 * is a part of it (GCC's .cold split; a tail call lands at an FDE's
 * start, a function's entry). The FDE's whole range from .eh_frame_hdr
 * (maps/ehfde.h); where a file has none, the CFI row's that libdw gives
 * (a part of it: forky's python3.14's .cold part is 84 KiB, one FDE of
 * hundreds of rows).
 */
static void cold_target(void *arg, uint64_t target)
{
	struct cold_ctx *c = arg;
	struct py_image *img = c->img;
	Dwarf_Frame *frame = NULL;
	uint64_t lo, hi;
	Dwarf_Addr start, end;
	bool signalp;
	int err;

	if (py_image__in_eval(img, target) || img->neval >= PY_EVAL_RANGES)
		return;
	err = eh_fde__covering(c->elf, target, &lo, &hi);
	if (!err) {
		if (target != lo)
			img->eval[img->neval++] = (struct py_range){ lo, hi };
		return;
	}
	if (err != -ENOTSUP || !c->cfi)
		return;
	if (dwarf_cfi_addrframe(c->cfi, target, &frame) ||
	    dwarf_frame_info(frame, &start, &end, &signalp) < 0 || target == start) {
		free(frame);
		return;
	}
	free(frame);
	img->eval[img->neval++] = (struct py_range){ start, end };
}

static int find_eval(struct elf_file *ef, struct py_image *img, char *why, size_t cap)
{
	struct elf_func fn;
	struct cold_ctx c = { .elf = elf_file__elf(ef), .img = img };
	uint8_t *code;
	int err;

	if (elf_file__find_func(ef, "_PyEval_EvalFrameDefault", &fn) || !fn.size ||
	    fn.size > EVAL_MAX) {
		say(why, cap, "no _PyEval_EvalFrameDefault with a size in its exported symbols "
		    "(.dynsym), where CPython's own build puts it: a build that hides or renames "
		    "its eval loop; its Python frames need one that exports it (--no-interp: "
		    "native frames only)");
		return -ENOTSUP;
	}
	img->eval[0] = (struct py_range){ fn.addr, fn.addr + fn.size };
	img->neval = 1;
	img->vaddr_off = fn.addr - fn.offset;
	code = malloc(fn.size);
	if (!code)
		return -ENOMEM;
	err = elf_file__read_addr(ef, fn.addr, code, fn.size);
	c.cfi = err ? NULL : dwarf_getcfi_elf(elf_file__elf(ef));
	if (c.cfi) {
		err = pydecode__jumps_out(code, fn.size, fn.addr, cold_target, &c);
		dwarf_cfi_end(c.cfi);
	}
	free(code);
	/* Without its .cold part, a frame there is not spliced: said by the mismatch. */
	return err == -ENOMEM ? err : 0;
}

/*
 * Does GOT slot @slot hold _PyRuntime's address (a dynamic relocation of
 * the slot against that symbol)?
 */
static bool slot_is_runtime(struct elf_file *ef, uint64_t slot)
{
	Elf *elf = elf_file__elf(ef);
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *syms;
		Elf_Scn *symscn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(symscn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(symscn, &symsh) ||
		    !(data = elf_getdata(scn, NULL)) || !(syms = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;

			if (!gelf_getrela(data, (int)i, &r) || r.r_offset != slot)
				continue;
			if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
				return false;
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			return name && !strcmp(name, "_PyRuntime") && !r.r_addend;
		}
	}
	return false;
}

/*
 * The TSS key: the table's offset into _PyRuntime (pylayout.c, from each
 * version's own headers, checked on builds), checked against
 * PyGILState_GetThisThreadState's code where the decoder knows it
 * (GCC's); from the code alone for a version the table lacks. Either
 * must lie in _PyRuntime and hold Py_tss_NEEDS_INIT in the file (both
 * ints 0: CPython makes the key at run time).
 */
static int find_tss(struct elf_file *ef, struct py_image *img, char *why, size_t cap)
{
	uint8_t code[HEAD_BYTES];
	struct elf_func fn;
	struct pydecode_key key;
	uint64_t table = img->layout.rt_tss_key ? img->runtime + img->layout.rt_tss_key : 0;
	uint64_t init = ~0ull;
	char v[32];
	int err = -ENOENT;

	py_layout__version_str(img->version, v, sizeof(v));
	if (!elf_file__find_func(ef, "PyGILState_GetThisThreadState", &fn) &&
	    !elf_file__read_addr(ef, fn.addr, code, fn.size && fn.size < sizeof(code) ? fn.size :
				 sizeof(code)))
		err = pydecode__tss_key(code, fn.size && fn.size < sizeof(code) ? fn.size :
					sizeof(code), fn.addr, &key);
	/* Through the GOT: the slot must be _PyRuntime's. */
	if (!err && key.via_slot && !slot_is_runtime(ef, key.addr))
		err = -ENOENT;
	if (!err) {
		/* The key is Py_tss_t's second int: _is_initialized, then _key. */
		img->tss_key = key.via_slot ? img->runtime + (uint64_t)key.off : key.addr - 4;
		if (table && table != img->tss_key) {
			say(why, cap, "its thread-state key (_PyRuntime.autoTSSkey) is at +%#llx by "
			    "PyGILState_GetThisThreadState's code, the layout of Python %s says +%#x: "
			    "a build whose runtime state heapsnoop does not know",
			    (unsigned long long)(img->tss_key - img->runtime), v,
			    img->layout.rt_tss_key);
			return -EINVAL;
		}
	} else if (table) {
		img->tss_key = table;
	} else {
		say(why, cap, "Python %s: heapsnoop has no layout of its runtime state and its "
		    "PyGILState_GetThisThreadState's code does not say where its thread-state "
		    "key is (%s): heapsnoop reads the frames of 3.11 to 3.14", v, strerror(-err));
		return -ENOTSUP;
	}
	if (img->tss_key < img->runtime || img->tss_key + 8 > img->runtime + img->runtime_size ||
	    elf_file__read_addr(ef, img->tss_key, &init, sizeof(init)) || init) {
		say(why, cap, "its thread-state key (_PyRuntime+%#llx, the layout of Python %s) is "
		    "not a Py_tss_t waiting to be made in its _PyRuntime: a build whose runtime "
		    "state heapsnoop does not know", (unsigned long long)(img->tss_key - img->runtime),
		    v);
		return -EINVAL;
	}
	return 0;
}

/* PyCode_Type: its size checks the layout; its destructor is probed. */
static int find_code_type(struct elf_file *ef, struct py_image *img, char *why, size_t cap)
{
	uint8_t code[64];
	struct probesite ps;
	struct elf_func obj;
	uint64_t basicsize;

	if (elf_file__find_object(ef, "PyCode_Type", &obj) ||
	    read_u64(ef, obj.addr + img->layout.tp_dealloc - 16, &basicsize) ||
	    read_u64(ef, obj.addr + img->layout.tp_dealloc, &img->code_dealloc)) {
		say(why, cap, "no PyCode_Type in its exported symbols (.dynsym) or data, where "
		    "CPython's own build puts it: a build that hides its C API; its Python frames "
		    "need one that exports it (--no-interp: native frames only)");
		return -ENOTSUP;
	}
	img->code_type = obj.addr;
	/* tp_basicsize: the code object up to its code units. */
	if (basicsize != img->layout.co_code) {
		say(why, cap, "its code objects are %llu bytes before their code, the layout of its "
		    "version says %u", (unsigned long long)basicsize, img->layout.co_code);
		return -EINVAL;
	}
	if (!img->code_dealloc || elf_file__offset_of(ef, img->code_dealloc, &img->code_dealloc_off)) {
		say(why, cap, "PyCode_Type's destructor is not in its code");
		return -EINVAL;
	}
	/* Its probe on an instruction the kernel emulates, its argument still there. */
	if (!elf_file__read_addr(ef, img->code_dealloc, code, sizeof(code)) &&
	    !probesite__find(code, sizeof(code), img->code_dealloc, PS_ARG(0), -1, &ps))
		img->code_dealloc_off += ps.offset;
	return 0;
}

static void find_malloc_hook(struct elf_file *ef, struct py_image *img)
{
	uint8_t code[HEAD_BYTES];
	struct elf_func fn;
	size_t n;

	if (elf_file__find_func(ef, "PyObject_Malloc", &fn))
		return;
	n = fn.size && fn.size < sizeof(code) ? fn.size : sizeof(code);
	if (elf_file__read_addr(ef, fn.addr, code, n) ||
	    pydecode__malloc_hook(code, n, fn.addr, &img->obj_hook, &img->pymalloc))
		img->obj_hook = img->pymalloc = 0;
}

static int read_layout(struct elf_file *ef, struct py_image *img, char *why, size_t cap)
{
	uint8_t blob[PY_DEBUG_OFFSETS_SIZE];
	char v[32];
	int err;

	py_layout__version_str(img->version, v, sizeof(v));
	if (PY_MINOR_OF(img->version) >= 0x030d) {
		/* _PyRuntime is some 300 KiB: a short one is not a CPython's. */
		if (img->runtime_size < sizeof(blob) ||
		    elf_file__read_addr(ef, img->runtime, blob, sizeof(blob))) {
			say(why, cap, "Python %s: its _PyRuntime (%llu bytes) has no initialised "
			    "_Py_DebugOffsets to read in the file", v,
			    (unsigned long long)img->runtime_size);
			return -EINVAL;
		}
		err = py_layout__from_debug_offsets(blob, sizeof(blob), img->version,
						    img->runtime_size, &img->layout, why, cap);
		img->debug_offsets = !err;
		return err;
	}
	err = py_layout__table(img->version, &img->layout);
	if (err)
		say(why, cap, "Python %s: heapsnoop reads the frames of 3.11 to 3.14", v);
	return err;
}

int py_image__read(const char *path, struct py_image *img, char *why, size_t cap)
{
	struct elf_file *ef;
	struct elf_func rt, ver;
	uint32_t version;
	GElf_Ehdr eh;
	int err;

	memset(img, 0, sizeof(*img));
	say(why, cap, "?");
	err = elf_file__open(path, &ef);
	if (err)
		return err;
	if (elf_file__find_object(ef, "_PyRuntime", &rt)) {
		struct elf_func eval;

		/* A CPython (its eval loop, its version) that hides its runtime state. */
		if (elf_file__find_func(ef, "_PyEval_EvalFrameDefault", &eval) &&
		    elf_file__find_object(ef, "Py_Version", &ver)) {
			err = -ENOENT;
			goto out;
		}
		say(why, cap, "no _PyRuntime symbol in .dynsym or .symtab, where CPython's own "
		    "build exports it: a build that hides or renames its runtime state, where "
		    "heapsnoop finds its threads and (3.13 and later) its layout; its Python "
		    "frames need one that exports it (--no-interp: native frames only)");
		err = -ENOTSUP;
		goto out;
	}
	img->runtime = rt.addr;
	img->runtime_size = rt.size;
	if (!elf_file__is_native(ef)) {
		say(why, cap, "not a program of this machine");
		err = -ENOTSUP;
		goto out;
	}
	if (elf_file__find_object(ef, "Py_Version", &ver) ||
	    elf_file__read_addr(ef, ver.addr, &version, sizeof(version))) {
		say(why, cap, "a CPython before 3.11 (no Py_Version in its exported symbols): "
		    "heapsnoop reads the frames of 3.11 to 3.14; run it on one of those for its "
		    "Python frames");
		err = -ENOTSUP;
		goto out;
	}
	img->version = version;
	img->pie = gelf_getehdr(elf_file__elf(ef), &eh) && eh.e_type == ET_DYN;
	err = read_layout(ef, img, why, cap);
	if (!err)
		err = find_tss(ef, img, why, cap);
	if (!err)
		err = find_code_type(ef, img, why, cap);
	if (!err)
		err = find_eval(ef, img, why, cap);
	if (!err)
		find_malloc_hook(ef, img);
out:
	elf_file__close(ef);
	return err;
}

bool py_command__free_threaded(const char *cmd)
{
	char path[PATH_MAX];
	struct py_image img;
	const char *dirs = getenv("PATH");
	char why[8];

	if (strchr(cmd, '/'))
		return !py_image__read(cmd, &img, why, sizeof(why)) && img.layout.free_threaded;
	/* As execvp(): each directory of PATH (its default when unset) in turn. */
	for (const char *d = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; ; d++) {
		const char *end = strchrnul(d, ':');
		int n = snprintf(path, sizeof(path), "%.*s/%s", (int)(end - d), end > d ? d : ".",
				 cmd);

		if (n > 0 && (size_t)n < sizeof(path) && !access(path, X_OK))
			return !py_image__read(path, &img, why, sizeof(why)) &&
			       img.layout.free_threaded;
		if (!*end)
			return false;
		d = end;
	}
}

bool py_image__in_eval(const struct py_image *img, uint64_t pc)
{
	for (int i = 0; i < img->neval; i++)
		if (pc >= img->eval[i].start && pc < img->eval[i].end)
			return true;
	return false;
}

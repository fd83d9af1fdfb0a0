/* SPDX-License-Identifier: MIT */
/*
 * pyfind.h - a CPython 3.11 to 3.14 in a binary, found from the file
 * alone (what a stripped Debian python3.x or libpython3.x.so exports and
 * its own code says), before the process runs: its version (Py_Version),
 * layout (pylayout.h: _Py_DebugOffsets from 3.13, else the table,
 * checked against PyCode_Type's tp_basicsize), _PyRuntime, the TSS key
 * the thread states are kept under, PyCode_Type and its destructor (the
 * code objects' last look is taken there), the eval loop's code (the
 * function and its .cold part: the native frames Python frames are
 * spliced at), and the object allocator's hook (is pymalloc in use?).
 * Addresses are link-time: a PIE binary or a library adds its load bias.
 * docs/DESIGN.md, "Interpreter frames".
 */
#ifndef HEAPSNOOP_PYFIND_H
#define HEAPSNOOP_PYFIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/python/pylayout.h"

#define PY_EVAL_RANGES 4

struct py_range {
	uint64_t start, end;
};

struct py_image {
	uint32_t version;		/* PY_VERSION_HEX */
	struct py_layout layout;
	bool pie;			/* ET_DYN: the addresses below + the load bias */
	uint64_t vaddr_off;		/* its code's address - file offset (a PIE's bias from a mapping) */
	bool debug_offsets;		/* the layout from _Py_DebugOffsets */
	uint64_t runtime, runtime_size;	/* _PyRuntime */
	uint64_t tss_key;		/* its autoTSSkey (Py_tss_t) */
	uint64_t code_type;		/* PyCode_Type */
	uint64_t code_dealloc;		/* its tp_dealloc */
	uint64_t code_dealloc_off;	/* ... its probe's site (probesite.h) as a file offset */
	struct py_range eval[PY_EVAL_RANGES];	/* _PyEval_EvalFrameDefault, .cold */
	int neval;
	uint64_t obj_hook;		/* &_PyObject.malloc; 0: not found */
	uint64_t pymalloc;		/* the hook's value when pymalloc is in use */
};

/*
 * Read the CPython in the ELF file @path into @img. Returns 0; -ENOENT
 * (not a CPython: no _PyRuntime, no _PyEval_EvalFrameDefault, no
 * Py_Version), or with a reason in @why (@cap bytes) -ENOTSUP (a version
 * whose frames heapsnoop does not read: before 3.11, after 3.14, another
 * architecture; a build that hides _PyRuntime, _PyEval_EvalFrameDefault
 * or PyCode_Type; a 3.13 or later without its _Py_DebugOffsets cookie or
 * with a layout of it heapsnoop does not know) or -EINVAL (the file does
 * not agree with the layout of its version); -errno of reading it.
 */
int py_image__read(const char *path, struct py_image *img, char *why, size_t cap);

/*
 * Is command @cmd (a path, or a name looked up in PATH as execvp() does)
 * a free-threaded CPython (its _Py_DebugOffsets' free_threaded)? Such a
 * build refuses PYTHONMALLOC=malloc ("unknown allocator", fatal at its
 * start): its objects come from its own mimalloc. False for any other
 * file, or none.
 */
bool py_command__free_threaded(const char *cmd);

/* Is link-time address @pc in the eval loop's code? */
bool py_image__in_eval(const struct py_image *img, uint64_t pc);

#endif /* HEAPSNOOP_PYFIND_H */

/* SPDX-License-Identifier: MIT */
/*
 * pylayout.h - where CPython keeps what a frame walk and a code object's
 * name, file and line need, per version: the thread state's current
 * frame, the interpreter frame's fields, the code object's, a str's and
 * a bytes object's. Shared by the tracer (which reads another process:
 * user/interp/) and the in-process collector.
 *
 * Sources: 3.11 and 3.13 compiled from each version's own internal
 * headers (Debian's python3.11-dev 3.11.2, trixie's libpython3.13-dev
 * 3.13.5, Py_BUILD_CORE offsetof()s) and 3.11 checked against the DWARF
 * of Debian's python3.11-dbg; 3.12 computed by hand from 3.12's struct
 * definitions (cpython/pystate.h, cpython/code.h, pycore_frame.h) and
 * two independent published tables, then checked on a 3.12.1 built from
 * CPython's source (Debian has no 3.12): its code objects' size, the
 * frames of a chain and of the loop re-entered through C, every name and
 * line right. 3.12's autoTSSkey (pycore_runtime.h, struct
 * pyruntimestate: after _signals, 1544) from that 3.12.1's DWARF (gdb
 * ptype/o) and its GCC code (lea 0x608), and on python-build-standalone's
 * 3.12.10 (clang, no .symtab: its code says 0x608 too, in a form the
 * decoder does not know) live: at +1544 _is_initialized is 1 and
 * pthread_getspecific(key) is PyThreadState_Get() (3.12's own
 * thread-local, not the key); _PyRuntime is 459944 bytes in 3.12.1,
 * 459280 in 3.12.10 (something after the key changed size), the key's
 * place the same. test_pyfind and test_python run each build
 * present (tests/tracer/pylib.sh, other_pythons). 3.13 and later carry
 * their own description, _Py_DebugOffsets at the start of _PyRuntime
 * (3.13's pycore_runtime.h, 3.14's pycore_debug_offsets.h: 3.14 added
 * fields in the middle, so each version has its map of words):
 * py_layout__from_debug_offsets() reads it and only the fields it lacks
 * (the TSS key, _co_firsttraceable, tp_dealloc) come from a table: 3.13's
 * as above; 3.14's and free-threaded 3.14's compiled from 3.14.7's own
 * headers (Debian's python3.14_3.14.7.orig.tar.xz, Py_BUILD_CORE
 * offsetof()s, with and without Py_GIL_DISABLED) and checked on forky's
 * python3.14 (3.14.8, GCC: its PyGILState_GetThisThreadState's code says
 * the same key) and a --disable-gil 3.14.7 (tests/tracer/make-python.sh);
 * free-threaded 3.13's from 3.13.5's headers with Py_GIL_DISABLED (the
 * same offsetof()s give the default build's table above), checked on a
 * --disable-gil 3.13.5 built the same way.
 * docs/DESIGN.md, "Interpreter frames".
 */
#ifndef HEAPSNOOP_PYLAYOUT_H
#define HEAPSNOOP_PYLAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* PY_VERSION_HEX's major.minor, e.g. 0x030b for 3.11. */
#define PY_MINOR_OF(hexversion) ((uint32_t)(hexversion) >> 16)

/*
 * _PyInterpreterFrame.owner's value (3.12 and later) of the shim frame
 * that _PyEval_EvalFrameDefault pushes on entry: FRAME_OWNED_BY_CSTACK
 * (3.12, 3.13), FRAME_OWNED_BY_INTERPRETER (3.14): 3 in each. Owners of 3
 * and above are not a Python function's frame (3.14 added
 * FRAME_OWNED_BY_CSTACK, 4): a shim.
 */
#define PY_OWNER_CSTACK 3
/* ... a generator's or coroutine's own frame. */
#define PY_OWNER_GENERATOR 1

struct py_layout {
	uint32_t version;	/* PY_VERSION_HEX of the binary (Py_Version) */
	/* _PyRuntime: its Py_tss_t autoTSSkey (int _is_initialized, key) */
	uint32_t rt_tss_key;
	/* PyThreadState: cframe (3.11, 3.12) or current_frame (3.13) */
	uint32_t ts_frame;
	/* _PyCFrame.current_frame; -1: ts_frame is the current frame */
	int32_t cf_frame;
	/* _PyInterpreterFrame */
	uint32_t fr_code;	/* f_code; 3.13: f_executable (a code object or None) */
	uint32_t fr_previous;
	uint32_t fr_instr;	/* prev_instr (3.11, 3.12) or instr_ptr (3.13) */
	uint32_t fr_owner;	/* a byte */
	int32_t fr_entry;	/* 3.11's is_entry (a byte); -1: none (owner says) */
	uint32_t fr_read;	/* bytes of a frame a walk reads: all the above */
	/* PyCodeObject */
	uint32_t co_filename, co_name, co_qualname, co_linetable;
	uint32_t co_firstlineno;	/* an int */
	int32_t co_firsttraceable;	/* an int; -1: not known */
	uint32_t co_code;	/* co_code_adaptive: the code units */
	/* PyObject, PyTypeObject */
	uint32_t ob_type;
	uint32_t tp_dealloc;
	/* str (PyASCIIObject, PyCompactUnicodeObject) */
	uint32_t str_length;	/* Py_ssize_t, characters */
	uint32_t str_state;	/* the state bit field's word */
	uint32_t str_ascii;	/* compact ASCII data */
	uint32_t str_compact;	/* compact non-ASCII data */
	/*
	 * The state word shifted right by this first, for PY_STR_*: 0; 6 in
	 * a free-threaded 3.14, whose interned is a whole byte (kind at bit
	 * 8, not 2).
	 */
	uint32_t str_state_shift;
	/* bytes */
	uint32_t bytes_size;	/* ob_size */
	uint32_t bytes_data;	/* ob_sval */
	/* 3.14: f_executable is a _PyStackRef whose low bits tag it: these cleared */
	uint32_t fr_code_tag;
	/*
	 * Free-threaded 3.14: a thread runs its own copy of a code object's
	 * code units (thread-local bytecode): the frame's tlbc_index (an
	 * int32) into the code object's co_tlbc (a _PyCodeArray: its size,
	 * then a pointer a copy, the first co_code_adaptive). -1: none.
	 */
	int32_t fr_tlbc;
	int32_t co_tlbc;
	uint8_t free_threaded;	/* _Py_DebugOffsets' free_threaded (Py_GIL_DISABLED) */
};

/* A str's state word (shifted by str_state_shift): its kind (1, 2 or 4 bytes a character), compact, ASCII. */
#define PY_STR_KIND(state) (((state) >> 2) & 7)
#define PY_STR_COMPACT 0x20
#define PY_STR_ASCII 0x40

/*
 * The layout of CPython @version (PY_VERSION_HEX) from the table into
 * *@l: 3.11, 3.12, 3.13, 3.14 (their default builds: with the GIL).
 * Returns 0, or -ENOTSUP for another minor version (3.13 and later:
 * py_layout__from_debug_offsets first; it alone knows free-threaded
 * builds).
 */
int py_layout__table(uint32_t version, struct py_layout *l);

/* The bytes of _Py_DebugOffsets py_layout__from_debug_offsets() reads (3.14's). */
#define PY_DEBUG_OFFSETS_SIZE (8 + 8 * 94)

/*
 * 3.13 and later: the layout from the _Py_DebugOffsets at the start of
 * _PyRuntime (@blob, @len bytes of it: from the binary's .data, which
 * holds its initialiser), checked: the cookie "xdebugpy", its version a
 * 3.13 or 3.14 (the two layouts of _Py_DebugOffsets this reader knows)
 * and equal to @version (Py_Version), free_threaded 0 or 1, its
 * _PyRuntime size equal to @runtime_size (the symbol's), the offsets
 * inside their structs. Fields it does not describe (the TSS key,
 * _co_firsttraceable, tp_dealloc) from the table of its minor version
 * and build (3.13, 3.14, each free-threaded or not). Returns 0; -EINVAL when
 * the blob does not agree with itself or the binary; -ENOTSUP for a
 * version before 3.13, no cookie, or a _Py_DebugOffsets version this
 * reader has no map of; either with why in @why (@cap bytes; may be NULL), one sentence
 * naming the property missing.
 */
int py_layout__from_debug_offsets(const void *blob, size_t len, uint32_t version,
				  uint64_t runtime_size, struct py_layout *l, char *why,
				  size_t cap);

/*
 * Write "3.11.2" for @version into @buf (@cap bytes). Returns @buf.
 */
const char *py_layout__version_str(uint32_t version, char *buf, size_t cap);

#endif /* HEAPSNOOP_PYLAYOUT_H */

/* SPDX-License-Identifier: MIT */
/*
 * pydecode.h - what a stripped CPython binary's own code says where its
 * data is, read by decoding a few of its exported functions
 * (interp/insnwalk.h's walk), one implementation per architecture
 * (pydecode_$(ARCH).c):
 *
 *   the TSS key        PyGILState_GetThisThreadState() loads
 *                      _PyRuntime's autoTSSkey._key into the first
 *                      argument and jumps to pthread_getspecific
 *   the eval loop's    _PyEval_EvalFrameDefault jumps into its .cold
 *   other parts        part (GCC's hot/cold split), which has no symbol
 *                      in a stripped binary: the jumps out of it that land
 *                      inside another FDE than at its start
 *   the allocator      PyObject_Malloc compares the hook _PyObject.malloc
 *   hook               with pymalloc's own function (LTO inlined that test
 *                      at every call site): the hook's address and that
 *                      value
 *
 * Shapes from Debian's python3.11 (3.11.2) and trixie's python3.13
 * (3.13.5) on x86-64 (docs/DESIGN.md, "Interpreter frames").
 */
#ifndef HEAPSNOOP_PYDECODE_H
#define HEAPSNOOP_PYDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where PyGILState_GetThisThreadState finds the TSS key. */
struct pydecode_key {
	/*
	 * false: the key (an int) is loaded from @addr (non-PIE, or PIE code
	 * that reaches _PyRuntime directly); true: the Py_tss_t is at @off
	 * past the address held in the GOT slot @addr (a libpython that
	 * reaches _PyRuntime through its GOT), passed to PyThread_tss_get.
	 */
	bool via_slot;
	uint64_t addr;
	int64_t off;
};

/*
 * Where the key is in @len bytes of code at @addr
 * (PyGILState_GetThisThreadState): *@key. Returns 0, -ENOENT (no such
 * load before the first jump or return), -EINVAL (capstone), -ENOMEM.
 */
int pydecode__tss_key(const uint8_t *code, size_t len, uint64_t addr, struct pydecode_key *key);

/*
 * Each direct jump (conditional or not) in @len bytes of code at @addr
 * whose target lies outside [@addr, @addr + @len), to @fn(@ctx, target).
 * Returns the jumps found, or -EINVAL, -ENOMEM.
 */
int pydecode__jumps_out(const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx);

/*
 * In PyObject_Malloc's first @len bytes at @addr: the address of the
 * hook it loads (*@hook) and the value it compares it with (*@pymalloc).
 * Returns 0, -ENOENT, -EINVAL, -ENOMEM.
 */
int pydecode__malloc_hook(const uint8_t *code, size_t len, uint64_t addr, uint64_t *hook,
			  uint64_t *pymalloc);

#endif /* HEAPSNOOP_PYDECODE_H */

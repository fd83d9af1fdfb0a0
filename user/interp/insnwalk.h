/* SPDX-License-Identifier: MIT */
/*
 * insnwalk.h - one walk over a function's instructions for the rooms'
 * decoders (python/pydecode_*.c, luajit/ljdecode_*.c): capstone opened
 * for an architecture with its details on, the code decoded one
 * instruction at a time at its own addresses (cs_disasm_iter into one
 * cs_malloc'ed instruction), each handed to the decoder's step, which
 * reads its shape; what does not decode (padding, data in the code, a
 * literal pool, a jump table) is stepped over, a byte on x86-64 (the
 * shortest instruction), a word on arm64 (every instruction's size).
 */
#ifndef HEAPSNOOP_INSNWALK_H
#define HEAPSNOOP_INSNWALK_H

#include <capstone/capstone.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

enum insnwalk_arch {
	INSNWALK_X86_64,
	INSNWALK_ARM64,
};

/* What a step says: go on, or end the walk (the shape found, or no shape past here). */
enum {
	INSNWALK_ON = 0,
	INSNWALK_FOUND = 1,
	INSNWALK_END = 2,
};

/* A decoder's step over instruction @in (its details filled): INSNWALK_*. */
typedef int (*insnwalk_step_fn)(void *ctx, const cs_insn *in);

/*
 * Walk the @len bytes of @code, at link-time address @addr, for @arch:
 * @step(@ctx, insn) for each instruction in order, at most @max of them
 * (0: no limit; what does not decode is not counted). Returns what the
 * step that ended it returned (INSNWALK_FOUND, INSNWALK_END), INSNWALK_ON
 * (0) if the code or @max ran out first, -EINVAL (capstone cannot open
 * @arch), -ENOMEM.
 */
int insnwalk(enum insnwalk_arch arch, const uint8_t *code, size_t len, uint64_t addr, size_t max,
	     insnwalk_step_fn step, void *ctx);

/*
 * Each direct jump (b, b.cond, cbz, tbz; jmp, jcc) in the @len bytes of
 * @code at @addr whose target lies outside [@addr, @addr + @len), to
 * @fn(@ctx, target), in order. Returns how many, -EINVAL, -ENOMEM.
 */
int insnwalk__jumps_out(enum insnwalk_arch arch, const uint8_t *code, size_t len, uint64_t addr,
			void (*fn)(void *ctx, uint64_t target), void *ctx);

/* A decoder's answer from insnwalk()'s: 0 if its step found the shape, else -ENOENT or the error. */
static inline int insnwalk__found(int walked)
{
	if (walked < 0)
		return walked;
	return walked == INSNWALK_FOUND ? 0 : -ENOENT;
}

#endif /* HEAPSNOOP_INSNWALK_H */

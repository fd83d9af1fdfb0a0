/* SPDX-License-Identifier: MIT */
/*
 * ljdecode.h - where LuaJIT's own allocator function is, read from the
 * code of lua_newstate (interp/insnwalk.h's walk), one implementation per
 * architecture (ljdecode_$(ARCH).c).
 *
 * lj_alloc_f, LuaJIT's lua_Alloc, is not exported (LJ_FUNC: hidden). Its
 * one way in is lua_newstate (lj_state.c, 2.1 since the PRNG change of
 * 2020): luaL_newstate passes LJ_ALLOCF_INTERNAL ((lua_Alloc)(1237 << 4),
 * 0x4d50), which lua_newstate compares its allocf with, and in that case
 * replaces by lj_alloc_f, loaded (a %rip-relative lea; adrp and add) into
 * the same register, then called through it for the GG_State, its size
 * (nsize) an immediate: what names the build, and so its layout
 * (ljproto.h's struct lj_layout: 6240 bytes for Debian 12's on x86-64).
 * Shapes from Debian 12's luajit and libluajit-5.1-2
 * (2.1.0~beta3+git20220320) on x86-64; arm64's in ljdecode_arm64.c.
 */
#ifndef HEAPSNOOP_LJDECODE_H
#define HEAPSNOOP_LJDECODE_H

#include <stddef.h>
#include <stdint.h>

/* LuaJIT's LJ_ALLOCF_INTERNAL (lj_state.h), what luaL_newstate passes. */
#define LJ_ALLOCF_INTERNAL 0x4d50

/*
 * In @len bytes of lua_newstate's code at link-time address @addr: the
 * address lj_alloc_f is loaded from (*@allocf): the register compared
 * with LJ_ALLOCF_INTERNAL, given a %rip-relative lea (one target: two
 * different ones are no shape); *@gg_size the size the first call
 * through that register asks for (0: not seen). Returns 0, -ENOENT (no
 * such shape), -EINVAL (capstone), -ENOMEM.
 */
int ljdecode__allocf(const uint8_t *code, size_t len, uint64_t addr, uint64_t *allocf,
		     uint32_t *gg_size);

#endif /* HEAPSNOOP_LJDECODE_H */

/* SPDX-License-Identifier: MIT */
/*
 * unwind_swap.S - swap_enter(cb): calls cb() from a frame whose size
 * differs between libshapes_a.so (16 bytes) and libshapes_b.so (32,
 * SWAP_B) while every instruction stays at the same offset (the immediate
 * of one instruction differs): once b is loaded where a was, its return
 * address is a's, and only its CFI tells the frames apart. The first
 * object of both libraries, so its offset is the same in each.
 */
#ifdef SWAP_B
#define FRAME 32
#else
#define FRAME 16
#endif

	.text
	.globl swap_enter
	.type swap_enter, %function
swap_enter:
	.cfi_startproc
#if defined(__x86_64__)
	sub $(FRAME - 8), %rsp
	.cfi_def_cfa_offset FRAME
	call *%rdi
	add $(FRAME - 8), %rsp
	.cfi_def_cfa_offset 8
	ret
#else
	stp x29, x30, [sp, #-FRAME]!
	.cfi_def_cfa_offset FRAME
	.cfi_offset x29, -FRAME
	.cfi_offset x30, -FRAME + 8
	mov x29, sp
	blr x0
	ldp x29, x30, [sp], #FRAME
	.cfi_restore x30
	.cfi_restore x29
	.cfi_def_cfa_offset 0
	ret
#endif
	.cfi_endproc
	.size swap_enter, . - swap_enter
	.section .note.GNU-stack, "", %progbits

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * interpframe.h - interpreter frames, shared by the BPF side (bpf/interp.bpf.h
 * and each kind's walk: user/interp/python/python.bpf.h) and the loader
 * (user/interp/): what a process's walk needs to know (struct
 * hs_interp_proc, in the interp_procs map by tgid), what a walk sends
 * (HS_EV_INTERP: struct hs_interp_frame, event.h) and a code object's
 * last look (HS_EV_INTERP_CODE: struct hs_interp_code).
 *
 * The record is the same for every kind: a kind, then two words a frame
 * whose meaning is the kind's (below), so a second interpreter (Lua) adds
 * its kind, its words and its walk, and nothing else changes.
 * docs/DESIGN.md, "Interpreter frames".
 */
#ifndef HEAPSNOOP_INTERP_H
#define HEAPSNOOP_INTERP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "heapsnoop/luaframe.h"

enum hs_interp_kind {
	HS_INTERP_NONE = 0,
	HS_INTERP_PYTHON = 1,	/* CPython 3.11 to 3.14 */
	HS_INTERP_LUA = 2,	/* PUC Lua 5.4 and 5.1 */
	HS_INTERP__MAX,
};

/* Interpreter frames one allocation's record carries at most. */
#define HS_INTERP_MAX_FRAMES 128
/* ... on a kernel before 6.2 (bpf/config.h py_walk_bound). */
#define HS_PY_WALK_OLD 64

/*
 * One interpreter frame, innermost first. @code: what the loader names
 * the frame by (Python: the code object; Lua: the prototype or C
 * function, include/heapsnoop/luaframe.h). @pos: where in it, and the
 * kind's flags (Lua's: luaframe.h's):
 *   Python: bits 0-31 the instruction's index in the code units
 *   (signed: a frame not yet started is before 0), bits 32-39
 *   _PyInterpreterFrame.owner, bit 40 3.11's is_entry: the frame is the
 *   outermost of one _PyEval_EvalFrameDefault's (3.12 and later mark
 *   that by the shim frame after it, owner 3, which the loader drops).
 */
struct hs_interp_frame {
	__u64 code;
	__u64 pos;
};

#define HS_PY_POS_INDEX(pos) ((__s32)(__u32)(pos))
#define HS_PY_POS_OWNER(pos) ((__u32)((pos) >> 32) & 0xff)
#define HS_PY_POS_ENTRY (1ULL << 40)

/*
 * CPython in a process: where its thread state and frames are, set by
 * the loader from the binary (user/interp/python/pyfind.c) and the C
 * library (the thread's key data: glibc's struct pthread). Offsets are
 * bytes; addresses the process's.
 */
struct hs_py_proc {
	__u64 tss_key;		/* &_PyRuntime.autoTSSkey: int initialized, unsigned int key */
	__s64 tsd_first;	/* thread pointer -> struct pthread's specific_1stblock[0] */
	__s64 tsd_second;	/* thread pointer -> specific[0] (second level's blocks) */
	__u32 tsd_entry;	/* sizeof(struct pthread_key_data) */
	__u32 tsd_data;		/* its data pointer's offset */
	__u32 ts_frame;		/* PyThreadState: cframe, or current_frame (3.13) */
	__s32 cf_frame;		/* _PyCFrame.current_frame; -1: none (3.13) */
	__u32 fr_code, fr_previous, fr_instr, fr_owner;	/* 8-aligned but owner */
	__s32 fr_entry;		/* 3.11's is_entry; -1: owner == 3 says it */
	__u32 fr_read;		/* bytes a frame read takes, <= 128 */
	__u32 co_code;		/* co_code_adaptive */
	/* a code object's last look */
	__u32 co_qualname, co_filename, co_linetable, co_firstlineno;
	__s32 co_firsttraceable;
	__u32 str_length, str_state, str_ascii, str_compact;
	__u32 bytes_size, bytes_data;
	__u64 fr_code_tag;	/* low bits of f_executable cleared (3.14's _PyStackRef tag) */
	__s32 fr_tlbc;		/* free-threaded 3.14: the frame's tlbc_index; -1: none */
	__s32 co_tlbc;		/* ... the code object's co_tlbc (_PyCodeArray *) */
	__u32 str_state_shift;	/* a str's state word >> this: 3.14t's interned is a byte */
	__u32 pad;
};

/*
 * interp_procs' value: a process whose interpreter frames are read, and
 * what its kind's walk needs (another kind adds its struct to the union).
 */
struct hs_interp_proc {
	__u32 kind;		/* enum hs_interp_kind */
	__u32 max_frames;	/* <= HS_INTERP_MAX_FRAMES */
	union {
		struct hs_py_proc py;	/* HS_INTERP_PYTHON */
		struct hs_lua_proc lua;	/* HS_INTERP_LUA */
	};
};

/* Processes whose interpreter frames are read at once (interp_procs). */
#define HS_INTERP_PROCS 1024

/* A code object's last look (HS_EV_INTERP_CODE), after the event's header. */
#define HS_ICODE_NAME 256
#define HS_ICODE_FILE 512
#define HS_ICODE_TABLE 8192

struct hs_interp_code {
	__s32 firstline;	/* Python: co_firstlineno */
	__s32 aux;		/* Python: _co_firsttraceable, -1: not known */
	__u16 name_len;		/* bytes in name[] */
	__u16 file_len;		/* bytes in file[] */
	__u8 name_kind;		/* bytes a character (Python's str kinds: 1, 2, 4); 0: unread */
	__u8 file_kind;
	__u16 pad;
	__u32 table_len;	/* bytes in table[] */
	__u32 table_want;	/* the table's own length: more than table_len, cut */
	__u8 name[HS_ICODE_NAME];	/* Python: co_qualname's characters */
	__u8 file[HS_ICODE_FILE];	/* co_filename's */
	__u8 table[];		/* co_linetable's bytes, at most HS_ICODE_TABLE */
};

#endif /* HEAPSNOOP_INTERP_H */

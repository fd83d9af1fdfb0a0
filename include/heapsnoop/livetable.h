/* SPDX-License-Identifier: MIT */
/*
 * livetable.h - the preload collector's live set in shared memory: the
 * layout one process image writes (user/collector/livetable/ltwrite.c) and anyone
 * reads (heapsnoop --preload, the process's own last dump), while the
 * writer runs or after it died, however it died; and the messages
 * through which an image hands its table to heapsnoop. Crosses process
 * boundaries as event.h does between BPF and the loader; docs/COLLECTOR.md
 * ("The live table") draws it and gives its protocols.
 *
 * Three regions, each a run of segments that double (segment k holds
 * seg0 << k bytes), made as the region fills, so that the table grows
 * with the live set and the stacks and nothing has a room of its own to
 * fill; each region is one space of offsets ("logical": segment k starts
 * at seg0 * (2^k - 1)), its records never across a segment's end:
 *
 *   modules  append-only `map` records (executable segments)
 *   stacks   append-only nodes, interned once: a node is a parent id
 *            and its own frames; a stack is a node's frames, then its
 *            parent's, and so on (its outer frames shared: heaptrack's
 *            trace tree, a run of frames a node); a node's id is its
 *            offset / 8 (0: none)
 *   entries  one per tracked live block, 32 bytes, updated in place;
 *            slot s at offset 32 * s
 *
 * The image's memfd (sealed against shrinking and growing, sparse: a page
 * exists once written) holds the header and each region's segment 0; a
 * later segment is a memfd of its own, sealed, handed to heapsnoop
 * (LT_HELLO_SEGMENT) before the header says it is there. A reader maps
 * what it was handed and nothing else, so it never faults; a segment the
 * header names that it does not hold is missing, counted.
 *
 * The writer may die between any two of its stores, and a reader of a
 * running writer sees its stores as they land:
 *  - an entry's seq is a sequence count whose parity is its state: odd
 *    live, even free. Its fields are written while it is even, then seq
 *    is made odd with a release store; freeing makes it even again. A
 *    reader copies the fields between an acquire load of an odd seq and
 *    a second load after an acquire fence, equal or read again: no torn
 *    entry is ever taken for live, before or after the writer's death.
 *  - a realloc that moves a tracked block publishes its new entry with
 *    link = 1 + the old slot, frees the old one, then clears the link:
 *    a reader that finds the old slot still live skips the new entry, so
 *    a call in flight is seen before or after, never both, never neither.
 *  - stack nodes and module records are written, then their commit word
 *    is stored (release); a node names a parent only once that one is
 *    committed, so a parent's id is below its child's (a reader refuses
 *    any other: no cycle); an entry names a stack only once it is
 *    committed, and a stack is interned only once the modules its frames
 *    are in are recorded.
 *  - a segment is made, then handed over, then its place in the header
 *    stored (release); the writer uses it only after that.
 *  - high-water marks are stored with release and read with acquire;
 *    everything a reader takes from here is checked against what it
 *    mapped (the writer may be broken or hostile:
 *    user/collector/livetable/ltread.c).
 */
#ifndef HEAPSNOOP_LIVETABLE_H
#define HEAPSNOOP_LIVETABLE_H

#include <stdint.h>

#include "heapsnoop/codec.h"

#define LT_MAGIC	0x3162616c65766c68ull	/* "hlvelab1" */
/*
 * 4: a thread's stacks go on with its creator's (LT_CREATOR_FRAME, the
 * header's creators); 3: regions grow by segments, stacks share their
 * outer frames (2: 1024 frames; 1: 31)
 */
#define LT_VERSION	4
#define LT_HDR_SIZE	4096u

/*
 * Frames a stack holds at most: 1024, in continuation tokens of the
 * codec's 31; no more than a record holds (user/common/records.h's
 * REC_MAX_DEPTH, 16384: the collector asserts it). Fewer than the tracer
 * keeps because the collector walks a deep stack into a buffer on the
 * allocating thread's own stack (8 KiB; 16384 frames would be 128 KiB, more
 * than a small thread's whole stack); a deeper one says cut=depth.
 */
#define LT_MAX_DEPTH	1024

/* The regions, in the header's region[] order. */
enum { LT_MOD = 0, LT_STK = 1, LT_ENT = 2, LT_NREGIONS = 3 };

#define LT_SEGS		32	/* segments a region has at most */
#define LT_SEG_MIN	4096ull	/* a region's segment 0: a power of two from a page ... */
#define LT_SEG_MAX	(1ull << 30)	/* ... to 1 GiB */
#define LT_SEG_OWN	1ull	/* region[].seg[k]: in a memfd of its own (LT_HELLO_SEGMENT) */

struct lt_region {
	uint64_t seg0;			/* segment 0's bytes; segment k holds seg0 << k */
	/*
	 * Where segment k is: its offset in the image's memfd (the writer
	 * puts segment 0 there), LT_SEG_OWN, or 0: not made yet. Stored with
	 * release, once.
	 */
	uint64_t seg[LT_SEGS];
};

/* The segment that holds offset @off of a region whose segment 0 is 1 << @shift bytes. */
static inline unsigned int lt_seg_of(uint64_t off, unsigned int shift)
{
	return 63u - (unsigned int)__builtin_clzll((off >> shift) + 1);
}

/* Where segment @k starts, in its region's offsets. */
static inline uint64_t lt_seg_start(unsigned int k, unsigned int shift)
{
	return ((1ull << k) - 1) << shift;
}

struct lt_header {
	uint64_t magic;			/* LT_MAGIC */
	uint32_t version;		/* LT_VERSION */
	uint32_t entry_size;		/* sizeof(struct lt_entry) */
	int32_t pid;			/* the writer's pid, in its own pid namespace */
	int32_t parent;			/* a forked child's parent at the fork; else 0 */
	uint64_t sample_bytes;		/* the blocks are a sample of this mean; 0: all */
	char comm[16];			/* the image's name at its start (exit sections) */
	/* High-water marks, in their regions' offsets: stored with release, read with acquire. */
	uint64_t mod_used;		/* bytes of module records reserved */
	uint64_t stk_used;		/* bytes of stack nodes reserved (8: none yet) */
	uint64_t ent_hwm;		/* slots handed out: only [0, ent_hwm) may be live */
	/* What could not be recorded (heapsnoop: NOT RECORDED, exit status 3). */
	uint64_t lost_entries;		/* tracked blocks without an entry (no room: the table could not grow) */
	uint64_t lost_stacks;		/* entries without a stack (likewise) */
	uint64_t lost_modules;		/* modules not recorded (likewise) */
	uint64_t forks;			/* fork()s begun: each child says hello (LT_HELLO_FORK) */
	int32_t exec_pending;		/* the pid of an exec under way in this image, 0 */
	uint32_t reserved;
	/*
	 * A CPython whose frames the collector reads (heapsnoop --preload
	 * --interp python; 0: none): its PY_VERSION_HEX and the address of
	 * its eval loop (_PyEval_EvalFrameDefault), by which heapsnoop finds
	 * the binary to read (its .cold part, its layout) in the process's
	 * mappings. Written once, before any stack holds LT_PY_* words.
	 */
	uint32_t py_version;
	/*
	 * A PUC Lua whose frames the collector reads (--interp lua; 0: none):
	 * its enum lua_vm (user/interp/lua/lualayout.h: 1 5.4, 2 5.1) and
	 * lua_newstate's address, by which heapsnoop finds the binary that
	 * holds the VM (its interpreter loop, lua_resume). Written once,
	 * before any stack holds Lua words (LT_LUA_*).
	 */
	uint32_t lua_vm;
	uint64_t py_eval;
	uint64_t lua_newstate;
	struct lt_region region[LT_NREGIONS];	/* LT_MOD, LT_STK, LT_ENT */
	/*
	 * 1: stacks may hold LT_CREATOR_FRAME (a thread was made through the
	 * collector's pthread_create): a dump names it. Stored (release)
	 * before the first such stack.
	 */
	uint32_t creators;
};

/*
 * The boundary between a thread's own frames and those of the
 * pthread_create call that made it (docs/DESIGN.md, "Who created a
 * thread"), a word among a stack's native frames: the frames after it
 * are the creating thread's, innermost first (pthread_create itself,
 * then its caller), and may hold another boundary, to the first thread.
 * No user-space address: a synthetic frame address (records.h's [2^62,
 * 2^63)) above any id a frame table gives (2^24 at most), so that a dump
 * writes it as it is, named by one `frame` record of kind `thread`,
 * function `[created by]` (ltfmt__creator_frame()), as the tracer's.
 */
#define LT_CREATOR_FRAME	0x6000000000000000ull

/*
 * A stack's Python frames (docs/COLLECTOR.md, "Python frames"): after its
 * native frames, the thread's chain of CPython frames, innermost first,
 * two words each, every word >= 2^63 (no native frame is):
 *   code word  LT_PY_WORD | [LT_PY_ENTRY] | [LT_PY_MORE] | the code object's address
 *   pos word   LT_PY_WORD | LT_PY_POS | fingerprint << 24 | code unit index (24 bits, signed)
 * ENTRY: 3.11's is_entry (the frame ends its eval loop's segment); MORE:
 * the chain went on past this frame (not kept). The fingerprint
 * (lt_py_fingerprint()) ties the frame to the code object the address
 * held then: a reader that finds another there names nothing.
 */
/*
 * A code object's record (docs/COLLECTOR.md, "Python frames"): a node
 * of the stacks' region that no entry names (no parent, not LEAF: its
 * words are the record's), written by the collector
 * before the first stack that holds the code object, so that its frames
 * are named from the table alone, after the process's death too. Its
 * words: LT_PY_CODEREC; the code object's address; fingerprint |
 * co_firstlineno << 32; _co_firsttraceable (32 bits) | the location
 * table's bytes kept << 32; the name's characters (24 bits) | their size
 * (1, 2, 4) << 24 | the file's characters << 32 | their size << 56; the
 * location table's whole length; then the name's, the file's and the
 * table's bytes, packed, to the record's end.
 */
#define LT_PY_CODEREC	0xf00000004f434f44ull	/* no frame word: bits 61, 62 and 60 together */
#define LT_PY_CODEREC_WORDS 6

/*
 * A stack's Lua frames (docs/COLLECTOR.md, "Lua frames"), as its Python
 * ones, after its native frames: luawalk.h's walk of the thread's state,
 * innermost first, two words each:
 *   code word  LT_PY_WORD | [LT_PY_MORE] | the Proto's (a C function's) address
 *   pos word   LT_PY_WORD | LT_PY_POS | fingerprint << 34 | kind << 32 |
 *              luaframe.h's flags (its pos >> 56) << 24 | the instruction's index
 * The index is the saved pc's (the next instruction: Lua's currentpc + 1),
 * 0 for a C function or none; the fingerprint (24 bits) ties the frame to
 * the Proto the address held then (its source's, code's and line
 * table's addresses, its size and first line). MORE: the walk went on.
 *
 * A frame's name record (LT_LUA_NAMEREC), a node of the stacks' region
 * that no entry names (as LT_PY_CODEREC's), written by the collector before the first stack
 * that holds the frame under that caller: what Lua's traceback says of
 * it, resolved in the process as luanames.h does (the name depends on the
 * caller's calling instruction and on package.loaded, so it is resolved
 * at that allocation, not later). Its words: LT_LUA_NAMEREC; the frame's
 * code and pos words; its caller's code and pos words (0 0: none, the
 * thread's outermost frame); line (int32, -1: none) | the function
 * text's bytes << 32 (16 bits) | LT_LUA_REC_CALLS | LT_LUA_REC_STALE; the
 * chunk's bytes; then the function text and the chunk, packed.
 */
#define LT_LUA_NAMEREC	0xf00000004e41554cull	/* no frame word, as LT_PY_CODEREC */
#define LT_LUA_NAMEREC_WORDS 7
#define LT_LUA_REC_CALLS (1ull << 48)	/* 5.1: its instruction is OP_CALL/OP_TAILCALL */
#define LT_LUA_REC_STALE (1ull << 49)	/* its Proto could not be read: "?" */
#define LT_LUA_FP_MASK	0xffffffu

static inline uint64_t lt_lua_pos(uint32_t fp, uint32_t kind, uint32_t flags, uint32_t index)
{
	return (1ull << 63) | (1ull << 60) | (uint64_t)(fp & LT_LUA_FP_MASK) << 34 |
	       (uint64_t)(kind & 3) << 32 | (uint64_t)(flags & 0xff) << 24 | (index & 0xffffffu);
}

static inline uint32_t lt_lua_kind(uint64_t pos)
{
	return (uint32_t)(pos >> 32) & 3;
}

static inline uint32_t lt_lua_flags(uint64_t pos)
{
	return (uint32_t)(pos >> 24) & 0xff;
}

#define LT_PY_WORD	(1ull << 63)
#define LT_PY_POS	(1ull << 60)
#define LT_PY_ENTRY	(1ull << 62)
#define LT_PY_MORE	(1ull << 61)
#define LT_PY_ADDR	((1ull << 57) - 1)	/* any user-space address (5-level paging, 52-bit arm64) */
#define LT_PY_INDEX_BAD	(-(1 << 23))

static inline uint64_t lt_py_pos(uint32_t fp, int32_t index)
{
	if (index < -(1 << 23) + 1 || index >= (1 << 23))
		index = LT_PY_INDEX_BAD;
	return LT_PY_WORD | LT_PY_POS | (uint64_t)fp << 24 | ((uint32_t)index & 0xffffffu);
}

static inline int32_t lt_py_index(uint64_t pos)
{
	return (int32_t)((uint32_t)pos << 8) >> 8;
}

static inline uint32_t lt_py_fp(uint64_t pos)
{
	return (uint32_t)(pos >> 24);
}

/*
 * A code object's fingerprint: its qualified name's, file's and location
 * table's addresses, its first line and its size in code units, and
 * some of their contents: the last 8 bytes of the name's and the file's
 * characters (their data as CPython keeps it) and the table's length and
 * first 8 bytes (lt_py_bytes8(): fewer, zero-padded), folded (rotations
 * and xors: no multiply on the walk's chain of loads). It tells a code
 * object from another made at its address later, whose name, file or
 * lines differ, though they took the old strings' addresses too.
 */
static inline uint64_t lt_py_rotl(uint64_t v, unsigned int k)
{
	return v << k | v >> (64 - k);
}

/* Up to 8 bytes at @p as a little-endian word, the rest 0. */
static inline uint64_t lt_py_bytes8(const unsigned char *p, uint64_t n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < 8 && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

struct lt_py_code_id {
	uint64_t qualname, file, table;	/* the objects' addresses */
	uint32_t firstline;
	uint64_t units;
	uint64_t name_tail, file_tail;	/* the last 8 bytes of their characters' data */
	uint64_t table_len, table_head;	/* the table's bytes, and its first 8 */
};

static inline uint32_t lt_py_fingerprint(const struct lt_py_code_id *c)
{
	uint64_t h = (c->qualname >> 3) ^ lt_py_rotl(c->file >> 3, 21) ^
		     lt_py_rotl(c->table >> 3, 42) ^
		     ((uint64_t)c->firstline << 32 | (c->units & 0xffffffffu)) ^
		     lt_py_rotl(c->name_tail, 7) ^ lt_py_rotl(c->file_tail, 29) ^
		     lt_py_rotl(c->table_head, 51) ^ lt_py_rotl(c->table_len, 13);

	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* A tracked live block (seq odd) or a free slot (seq even): 32 bytes. */
struct lt_entry {
	uint32_t seq;			/* sequence count; odd: live */
	uint32_t stack;			/* stack id; 0: none (stacks full) */
	uint64_t addr;			/* the user's pointer */
	uint64_t size;			/* bytes asked for: the record's size */
	uint32_t tid;			/* the thread that allocated it */
	uint32_t link;			/* a realloc in flight: 1 + the slot it replaces */
};

/*
 * A stack node: its commit word, its parent, then n words, its own
 * frames (call site first): the stack it stands for is these, then its
 * parent's stack (at most LT_MAX_DEPTH in all). Cut bits are a stack's,
 * on the node an entry names. A node with no frames has no parent (an
 * empty stack). A JOIN node (n = 1) stands for two stacks end to end: its
 * parent's, then the stack its word names (both ids below its own, neither
 * a JOIN): an interpreter's stack, its native frames and its interpreter
 * words each shared with other stacks. PAD (with OK, no frames) ends its
 * segment: the next node is at the next segment's start.
 */
struct lt_stack {
	uint32_t commit;		/* LT_STK_OK | [LEAF] | [JOIN] | cut << 16 | n; or LT_STK_PAD; 0 until whole */
	uint32_t parent;		/* the id of the node of its outer frames; 0: none */
	uint64_t frames[];		/* return addresses, call site first */
};
#define LT_STK_OK		0x80000000u
#define LT_STK_LEAF		0x40000000u	/* made as a whole stack; else an outer part or a record */
#define LT_STK_PAD		(LT_STK_OK | 0x20000000u)
#define LT_STK_JOIN		0x10000000u	/* two stacks end to end: its parent's, its word's */
#define LT_STK_WORDS(c)		((c) & 0xffffu)
#define LT_STK_CUT(c)		(((c) >> 16) & 3u)	/* records.h's REC_CUT_* bits */

/*
 * An executable segment of a module, a `map` record: commit is its
 * length; LT_MOD_PAD ends its segment (the next record is at the next
 * segment's start).
 */
struct lt_module {
	uint32_t commit;		/* bytes of this record, a multiple of 8; LT_MOD_PAD; 0 until whole */
	uint32_t gone;			/* unloaded: left out of dumps */
	uint64_t start, end, off;	/* [start, end) and the file offset of start */
	char build_id[129];		/* hex, or "-"; NUL-terminated (text.h's BUILD_ID_HEX_SIZE) */
	char path[];			/* NUL-terminated */
};
#define LT_MOD_PAD		8u


/*
 * The message every image that loads the collector sends heapsnoop once
 * (an abstract AF_UNIX datagram socket: the name in HEAPSNOOP_SOCK), with
 * SCM_RIGHTS [its table's memfd, a pidfd of itself, the memfds of its
 * segments past the first (a fork child's copies: nsegs)]: once sendmsg()
 * returned the kernel holds them for heapsnoop, whatever the sender does
 * next. heapsnoop takes the sender's pid from SCM_CREDENTIALS. A segment
 * made later comes alone (LT_HELLO_SEGMENT, SCM_RIGHTS [its memfd]), sent
 * before the header says it is there. The version is where version 1 and
 * 2 had it, so that a collector of another version is named as one.
 */
/*
 * The memfds' names (memfd_create(2); /proc/PID/maps shows
 * "/memfd:NAME (deleted)"): the table's LT_MEMFD_NAME, segment k of
 * region r's LT_MEMFD_NAME "-" and r << 5 | k in two hex digits. A
 * reader that was not handed them finds a table by them (heapsnoop agent
 * after a restart, /proc/PID/map_files: docs/AGENT.md).
 */
#define LT_MEMFD_NAME	"heapsnoop-live"
#define LT_MEMFD_TABLE	0xffu	/* livetable__memfd()'s id of the table itself */

#define LT_HELLO_MAGIC	0x6f6c6c65686c6800ull	/* "\0hlhello" */
enum { LT_HELLO_IMAGE = 1, LT_HELLO_FORK = 2, LT_HELLO_SEGMENT = 3 };
#define LT_HELLO_SEGS	(LT_NREGIONS * LT_SEGS)

struct lt_hello {
	uint64_t magic;			/* LT_HELLO_MAGIC */
	uint32_t version;		/* LT_VERSION */
	uint32_t kind;			/* LT_HELLO_IMAGE: a process's start or exec; _FORK; _SEGMENT */
	int32_t pid;			/* getpid(), the sender's namespace */
	int32_t parent;			/* LT_HELLO_FORK: the parent's pid */
	uint64_t start_ticks;		/* /proc/self/stat's starttime: kept across exec */
	char token[40];			/* HEAPSNOOP_TOKEN: heapsnoop's, so others are refused */
	uint32_t nsegs;			/* segment memfds in the message (_SEGMENT: 1) */
	uint32_t reserved;
	uint8_t segs[LT_HELLO_SEGS];	/* each one's region << 5 | its k, in the memfds' order */
};

#endif /* HEAPSNOOP_LIVETABLE_H */

/* SPDX-License-Identifier: MIT */
/*
 * records.h - the one home of heapsnoop's record lines (docs/OUTPUT.md):
 * `dump`, `map`, `live`, `end-dump`, `exit`, `end-exit`, the whole-run
 * accounting's `proc`, `stack` and `sample`, the `frame` and `jit`
 * records that name frames that are not native code, and the `tree` and
 * `node` records of a process's stacks as a tree of frames, the `ustack`
 * records that keep an allocation's registers and stack bytes for
 * unwinding later (recustack.c), each written
 * by records__write() and read back by records__parse(), here and
 * nowhere else; the frames of a `node` record (records__frames()); and
 * the stack of a `live` or `stack` record of the form with tokens,
 * deeper than one `~m#` token holds, split into tokens and put back
 * together (records__tokens(), records__stack()). heapsnoop writes them
 * (output/dump.c), heapdecode and the tests read them;
 * tests/common/test_records.c checks that what is written parses back to
 * the same values, tests/fuzz/fuzz_records.c that any line parses safely.
 *
 * A new record type: a value of enum record_type, its fields in struct
 * record, its keyword, writer and parser in records.c's three tables, its
 * grammar in docs/OUTPUT.md; every reader then parses it.
 */
#ifndef HEAPSNOOP_RECORDS_H
#define HEAPSNOOP_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heapsnoop/codec.h"
#include "text.h"

/*
 * A `live` or `stack` record's stack is incomplete or not in order (its
 * cut= field, docs/OUTPUT.md): the same bits as stacks.h's
 * STACK_TRUNCATED, STACK_FAULT and STACK_ORDER.
 */
#define REC_CUT_DEPTH		(1u << 0)	/* cut=depth: deeper than kept or copied */
#define REC_CUT_UNREADABLE	(1u << 1)	/* cut=unreadable: a frame not recovered */
#define REC_CUT_ORDER		(1u << 2)	/* cut=order: interpreter frames not
						 * placed exactly among the native ones */
#define REC_CUT_ALL		(REC_CUT_DEPTH | REC_CUT_UNREADABLE | REC_CUT_ORDER)

/*
 * The deepest stack a record keeps: REC_MAX_DEPTH frames, innermost first,
 * in REC_MAX_TOKENS `~m#` tokens of HS_MAX_DEPTH (31) frames each, the
 * first the lws record (the size and the innermost 31 frames), each next
 * one (its size 0) the next 31 outward; or as a chain of `node` records,
 * each a run of at most REC_NODE_MAX_FRAMES. A deeper stack keeps its
 * innermost REC_MAX_DEPTH frames and says cut=depth. 16384: what the
 * largest --stack-copy (1 MiB) holds of frames of 64 bytes, clang's
 * template instantiations at -ftemplate-depth's 1024 levels, CPython's
 * recursion limit with the native frames of a build that recurses in C;
 * a walk that runs away (a loop in a corrupt chain) stops there.
 */
#define REC_MAX_DEPTH		16384
/* A `node` record's run (its frames=), and a tracer tree node's: 1 to 1024. */
#define REC_NODE_MAX_FRAMES	1024
#define REC_MAX_TOKENS		((REC_MAX_DEPTH + HS_MAX_DEPTH - 1) / HS_MAX_DEPTH)
/* The tokens of the deepest record, a space after each but the last, and a NUL. */
#define REC_TOKENS_BUF		(REC_MAX_TOKENS * HS_TOKEN_BUF)

/*
 * A frame that is not native code (`frame` records): an address no
 * user-space address can be on x86-64 or arm64 (they end below 2^57),
 * below the format's 2^63, each naming one (process, function, file,
 * line) of an interpreter.
 */
#define REC_FRAME_BASE		(1ULL << 62)
#define REC_FRAME_END		(1ULL << 63)
static inline int rec_is_frame_addr(uint64_t addr)
{
	return addr >= REC_FRAME_BASE && addr < REC_FRAME_END;
}

/* The texts of `frame` and `jit` records, in bytes, at most. */
#define REC_NAME_MAX		1024	/* a function's name, a JIT range's */
#define REC_FILE_MAX		4096	/* a source file's path */
#define REC_KIND_MAX		15	/* an interpreter's: [a-z][a-z0-9_]* */

/* node=^: the node of the `node` record just before (no node= has this number). */
#define REC_NODE_PREV		UINT32_MAX

/* Every record line starts with this, anywhere in a line of a log. */
#define RECORDS_PREFIX "heapsnoop: "

enum record_type {
	REC_NONE,	/* no record keyword in the line */
	REC_DUMP,	/* dump reason= time= live= bytes= stacks= [sample-bytes=] */
	REC_MAP,	/* map pid= start= end= off= buildid= path= */
	REC_LIVE,	/* live pid= ptr= [cut=WHY] [shed=M] size= node=, or
			 * [depth=N] ~m#TOKEN... (or size= unencodable: ERROR) */
	REC_END_DUMP,	/* end-dump live= */
	REC_EXIT,	/* exit pid= time= live= bytes= comm= */
	REC_END_EXIT,	/* end-exit pid= live= */
	REC_PROC,	/* proc pid= peak= peak_count= peak_time= allocs= allocated=
			 * frees= temporary= live= bytes= [shed=] comm= */
	REC_STACK,	/* stack pid= allocs= allocated= frees= temporary= live=
			 * bytes= peak= peak_count= [cut=WHY] node=, or [depth=N]
			 * ~m#TOKEN... */
	REC_SAMPLE,	/* sample pid= time= live= bytes= */
	REC_FRAME,	/* frame pid= addr= kind= line= file= function= */
	REC_JIT,	/* jit pid= start= end= name= [code=] [line= file=] */
	REC_TREE,	/* tree pid= nodes= */
	REC_NODE,	/* node pid= level= frames=0xA[,0xB...] */
	REC_USTACK,	/* ustack pid= ptr= v= arch= frames= regs= size= want= skip=
			 * holes= data= */
};

/*
 * A `ustack` record (heapsnoop --keep-stacks, docs/OUTPUT.md): what the
 * unwinder read of one live allocation's stack, kept for unwinding later
 * (heapdecode, elsewhere). Version REC_USTACK_VERSION; registers in
 * enum hs_ureg's order of @arch (8 on x86-64, 13 on arm64); the copy is
 * @size bytes from the stack pointer - @skip, the stack @want bytes from
 * the stack pointer to its end, pages of the copy not there in @holes.
 */
#define REC_USTACK_VERSION	1
#define REC_USTACK_MAX_REGS	16
/* The largest copy a record keeps: the tracer's --stack-copy's largest (8 MiB), and a page. */
#define REC_USTACK_MAX_SIZE	((8u << 20) + 4096u)
struct rec_ustack {
	uint32_t version;	/* parsed: v=, any (the reader refuses others) */
	char arch[8];		/* "x86-64", "arm64" */
	uint32_t frames;	/* of the live record's, the innermost the online unwind gave */
	uint32_t nregs;
	uint64_t regs[REC_USTACK_MAX_REGS];
	uint32_t size, want, skip, holes;
	const uint8_t *bytes;	/* written: the copy, @size bytes */
	const char *data;	/* parsed: data='s text (records__ustack_bytes()) */
	size_t data_len;
};

/*
 * A text of the traced program in a parsed `frame` or `jit` record: its
 * escaped form in the line (docs/OUTPUT.md: bytes outside 0x21..0x7e and
 * '%' as %XX, "-" for none), @len bytes at @s; records__text() gives its
 * bytes.
 */
struct rec_text {
	const char *s;
	size_t len;
};

/*
 * One record's fields; which are used depends on the type (the comments
 * above). Strings that run to the end of the line (path, comm, error) and
 * the token point into the parsed line, or at the writer's caller's data.
 */
struct record {
	enum record_type type;
	int pid;			/* all but dump and end-dump */
	int64_t time_s;			/* dump, exit, sample: wall clock, seconds */
	uint32_t time_ms;		/* ... and milliseconds (0-999 written) */
	uint64_t live;			/* dump, end-dump, exit, end-exit, proc,
					 * stack, sample: count */
	uint64_t bytes;			/* dump, exit, proc, stack, sample: live bytes */
	/* proc, stack: whole-run counts since tracing began */
	uint64_t allocs, allocated, frees, temporary;
	/* proc: its peak live bytes and count; stack: its share at that peak */
	uint64_t peak, peak_count;
	int64_t peak_time_s;		/* proc: when (wall clock), seconds */
	uint32_t peak_time_ms;		/* ... and milliseconds */
	uint64_t stacks;		/* dump: unique stacks */
	uint64_t sample_bytes;		/* dump: the live set is a sample by bytes
					 * of this mean (sample-bytes=), 0: whole */
	char reason[16];		/* dump: exit, signal, usr1, interval */
	const char *comm;		/* exit, proc: name, to the end of line */
	uint64_t start, end, off;	/* map, jit: [start, end); map: the file
					 * offset of start */
	char build_id[BUILD_ID_HEX_SIZE];	/* map: hex, or "-" */
	const char *path;		/* map: to the end of the line */
	uint64_t ptr;			/* live: the allocation's address */
	/*
	 * live: recorded as a sample while the tracer shed load, kept with
	 * probability min(1, size / shed) (sampling.h shed_weight); 0: as
	 * every allocation is. proc: how many of its allocs were.
	 */
	uint64_t shed;
	uint32_t cut;			/* live, stack: REC_CUT_* bits, 0: a
					 * complete stack */
	/*
	 * live, stack: the stack's tokens, "~m#A[ ~m#B...]" (token_len
	 * bytes; records__tokens() makes them); live: or NULL: ...
	 */
	const char *token;
	size_t token_len;
	uint32_t depth;			/* ... their frames when more than one
					 * token (depth=N, 32..REC_MAX_DEPTH), 0: one */
	/*
	 * Written: continuation tokens kept apart from the first, " ~m#B[
	 * ~m#C...]" (tail_len bytes), written after token (the collector
	 * keeps its deep stacks' so); NULL: none. Parsed: never set, token
	 * holds every token.
	 */
	const char *tail;
	size_t tail_len;
	uint32_t ntokens;		/* parsed: how many tokens */
	/*
	 * live, stack, the form without tokens (has_node, token NULL): the
	 * stack is node @node of its process's last `tree` record, with the
	 * nodes above it (docs/OUTPUT.md), REC_NODE_PREV (node=^) the node of
	 * the last `node` record before it; live: its size in @size.
	 */
	bool has_node;
	uint32_t node;
	uint64_t size;			/* ... or unencodable: its size in bytes */
	const char *error;		/* ... and why, to the end of the line */
	uint32_t nodes;			/* tree: the `node` records that follow */
	/*
	 * node: its level (0: at the root; L + 1: under the last node of
	 * level L before it) and its frames, outermost first, 1 to
	 * REC_MAX_DEPTH: written from @frames, parsed in @frames_text
	 * ("0xA,0xB", frames_len bytes) for records__frames()
	 */
	uint32_t level;
	uint32_t nframes;
	const uint64_t *frames;
	const char *frames_text;
	size_t frames_len;
	/*
	 * frame: a synthetic address (rec_is_frame_addr) naming ...; jit:
	 * where the function's code starts, when the range is a part of it
	 * (code=, at most start; 0 or start: the range is the function's)
	 */
	uint64_t addr;
	char kind[REC_KIND_MAX + 1];	/* ... a frame of this interpreter: python, lua */
	uint32_t line;			/* ... at this source line, 0: unknown (frame;
					 * jit: the range's code's, with file) */
	/*
	 * ... in this function of this source file (frame; jit: the range's
	 * name in function). Written: the text itself, NUL-terminated, NULL
	 * or "" for none; parsed: in function_esc, file_esc.
	 */
	const char *function, *file;
	struct rec_text function_esc, file_esc;
	/*
	 * jit: start, end: a range of JIT code, named in function; its
	 * source file and line in file and line (none: file NULL or "" and
	 * line 0, no line= file= written); addr: code=
	 */
	struct rec_ustack us;		/* ustack: with pid and ptr */
};

/*
 * Write @r as one line (newline included) to @out, in docs/OUTPUT.md's
 * grammar. Returns 0; -EINVAL for a type with no line or fields the
 * grammar cannot hold (tokens that are not one, or not depth='s; a
 * `frame` address outside the synthetic range, a kind or a text over its
 * limit), nothing written then; -EIO if @out failed.
 */
int records__write(FILE *out, const struct record *r);

/*
 * Find the first record in @line (one line, NUL-terminated, its newline
 * stripped or not) and parse its fields into @r. Strings in @r point into
 * @line. Returns 0; -ENOENT if @line holds no record keyword (r->type is
 * REC_NONE); -EINVAL if it holds one whose fields are malformed (r->type
 * names the keyword found, the fields are not to be used).
 */
int records__parse(const char *line, struct record *r);

/*
 * The tokens of a stack of @depth (<= REC_MAX_DEPTH) @frames, innermost
 * first, @size bytes, into @out (@cap bytes, REC_TOKENS_BUF always
 * enough): the lws record of the size and the first HS_MAX_DEPTH frames,
 * then one of size 0 for each next HS_MAX_DEPTH, separated by single
 * spaces, NUL-terminated: a record's token and depth (depth when >
 * HS_MAX_DEPTH). Returns the length, or a negative hs_err (HS_ERANGE: a
 * frame or the size at or above 2^63; HS_EDEPTH: over REC_MAX_DEPTH;
 * HS_ENOSPC).
 */
int records__tokens(const uint64_t *frames, uint32_t depth, uint64_t size, char *out,
		    size_t cap);

/*
 * The same from @depth > HS_MAX_DEPTH: only the continuation tokens, for
 * frames HS_MAX_DEPTH.. of the stack, each with a space before it
 * (" ~m#B ~m#C"), to follow a first token encoded apart. Returns the
 * length (0 for @depth <= HS_MAX_DEPTH) or a negative hs_err.
 */
int records__tail_tokens(const uint64_t *frames, uint32_t depth, char *out, size_t cap);

/*
 * The stack of parsed `live` or `stack` record @r (r->token not NULL):
 * its size (the first token's) in *@size, its frames innermost first
 * into @frames (REC_MAX_DEPTH entries) and their count in *@depth.
 * Returns 0; a negative hs_err when the first token does not decode
 * (*@depth 0); a positive hs_err when a later one does not, or is not a
 * continuation (HS_ECONT), or the frames are not depth='s
 * (HS_EDEPTHSUM): *@size and *@depth are then what the tokens before it
 * gave, a stack to be marked cut, never to be shown whole.
 */
int records__stack(const struct record *r, uint64_t *size, uint64_t *frames, uint32_t *depth);

/*
 * The frames of parsed `node` record @r (r->nframes of them, outermost
 * first) into @out (@cap entries, REC_MAX_DEPTH always enough). Returns
 * how many, or -ENOSPC.
 */
int records__frames(const struct record *r, uint64_t *out, uint32_t cap);

/*
 * The bytes of parsed text @t (valid: records__parse checked it) into
 * @out (@cap bytes, NUL-terminated; REC_FILE_MAX + 1 always enough).
 * Returns the length, or -ENOSPC.
 */
int records__text(const struct rec_text *t, char *out, size_t cap);

/*
 * The copy of parsed `ustack` record @r into @out (r->us.size bytes, at
 * most @cap): data='s base64 decoded and its words expanded
 * (docs/OUTPUT.md, "Stack bytes kept"). Returns 0; -EINVAL for data that
 * is not that coding or not r->us.size bytes; -ENOSPC, -ENOMEM.
 */
int records__ustack_bytes(const struct record *r, uint8_t *out, size_t cap);

/*
 * The bytes data= takes for @size bytes of stack at @bytes after
 * registers @regs (@nregs): its coding's size before base64 (the cost
 * measured, docs/OUTPUT.md). Returns it, or -ENOMEM.
 */
long records__ustack_coded(const uint8_t *bytes, uint32_t size, const uint64_t *regs,
			   uint32_t nregs);

#endif /* HEAPSNOOP_RECORDS_H */

/* SPDX-License-Identifier: MIT */
/*
 * frametab_int.h - what frametab.c (the tables: kinds, processes,
 * interpreter frames, JIT ranges, lookups) and framelog.c (the frame and
 * jit records of a dump, written and taken back) share: the tables' shape
 * and their steps. Not for use outside those two files.
 */
#ifndef HEAPSNOOP_FRAMETAB_INT_H
#define HEAPSNOOP_FRAMETAB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frametab.h"
#include "htab.h"
#include "records.h"

/* An interpreter frame. */
struct fframe {
	uint32_t pid, line;
	uint64_t addr;
	const struct fkind *kind;	/* NULL: a placeholder, no record seen */
	char *function, *file;		/* as given, "" for no file */
	char *pfunction, *pfile;	/* printable (text_printable), when asked */
	uint32_t gen;			/* the dump that last needed it */
	uint64_t hash;			/* of its content */
};

/* A range of JIT code. */
struct jrange {
	uint64_t start, end;
	uint64_t seq;			/* added after every lower one */
	char *name, *pname;		/* as given; printable, when asked */
	char *file, *pfile;		/* its source file ("": none), the same */
	uint32_t line;			/* ... and line, 0: none */
	uint64_t code;			/* its function's code starts here (<= start) */
	uint32_t gen;
};

struct jset {
	struct jrange *v;		/* [0, nsorted) sorted, no overlap; then added */
	size_t n, nsorted, cap;
};

struct fkind {
	char name[REC_KIND_MAX + 1];
	char module[REC_KIND_MAX + 3];	/* "[name]" */
};

#define MAX_KINDS 64

struct fproc {
	uint32_t pid;
	struct htab *by_addr;		/* struct fframe * by (addr) */
	struct htab *by_content;	/* struct fframe * by content (writers) */
	struct jset jit;
	/* The dump's frames needed, in the order found (need_gen's dump). */
	struct fframe **need;
	size_t nneed, capneed;
	uint32_t need_gen;
	size_t memory;			/* its frames' and ranges' bytes */
};

struct frametab {
	struct htab *procs;		/* pid -> struct fproc */
	struct fkind kinds[MAX_KINDS];
	size_t nkinds;
	uint64_t next_id, seq;
	size_t nframes, missing, memory;
	uint32_t gen;			/* the dump being written */
	char **retired;			/* strings replaced: handed out, kept */
	size_t nretired, capretired;
};

/* The kind @name, added if new; NULL: a bad name, "jit", or too many. */
const struct fkind *ft_kind_of(struct frametab *ft, const char *name);
/* The process @pid's tables; made if @create (NULL: none, or no memory). */
struct fproc *ft_proc_of(struct frametab *ft, uint32_t pid, bool create);
/* @f's function and file become @function and @file (taken; the old ones
 * dropped): 0 or -ENOMEM. */
int ft_set_texts(struct frametab *ft, struct fframe *f, char *function, char *file);
/* A new frame of @p at @addr, its texts @function and @file (taken): the
 * frame, or NULL (no memory). */
struct fframe *ft_add_frame(struct frametab *ft, struct fproc *p, uint64_t addr,
			    char *function, char *file);
/* @p's frame at the synthetic address @addr, or NULL. */
struct fframe *ft_frame_at(struct fproc *p, uint64_t addr);
/* @js's ranges added since the last merge sorted in, overlaps resolved
 * for the newer range. */
void ft_merge_jit(struct frametab *ft, struct jset *js);
/* A JIT range [@start, @end) of @p named @name, at @file (taken, "" for
 * none):@line, in the code from @code on: 0, -ENOSPC (a process's ranges
 * at their limit) or -ENOMEM. */
int ft_add_range(struct frametab *ft, struct fproc *p, uint64_t start, uint64_t end,
		 char *name, char *file, uint32_t line, uint64_t code);
/* The range of @p holding @addr, or NULL. */
struct jrange *ft_range_at(struct frametab *ft, struct fproc *p, uint64_t addr);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * interp_int.h - what the interpreters' core (user/interp/: interp.c,
 * look.c) and its rooms (python/, lua/, luajit/: their rows of ops.h)
 * share: a traced process's interpreter state, the code objects' deaths
 * seen ahead in the ring, and the loader's interpreter object, with the
 * core's helpers a room calls. interp.h is the outside's API. The core
 * names no room's types: each room's state of a process is its own,
 * behind a pointer here.
 */
#ifndef HEAPSNOOP_INTERP_INT_H
#define HEAPSNOOP_INTERP_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "htab.h"
#include "interp/interp.h"
#include "interp/ops.h"
#include "interp/splice.h"

struct bpf_program;
struct mapset;
struct py_cache_stats;

enum iproc_state {
	IP_OFF,		/* no interpreter whose frames are read (or not looked at yet) */
	IP_WAIT_LIBC,	/* CPython found; its C library not mapped yet */
	IP_ON,		/* registered: its allocations come with their frames */
};

/* A code object's death seen ahead in the ring: its last look. */
struct death {
	uint64_t pos;
	uint64_t addr;
	size_t len;
	struct death *next;	/* the same address's later deaths */
	unsigned char look[];
};

/* One thread's frames, for its next allocation. */
struct pending {
	uint32_t nr, flags;
	struct hs_interp_frame f[HS_INTERP_MAX_FRAMES];
};

struct iproc {
	pid_t pid;
	enum iproc_state state;
	/*
	 * What it runs: the row (its room's) that made @room, or registered
	 * it (IP_ON). @room is that room's state of the process (python/
	 * pyproc.h's struct py_proc, lua/'s struct lua_proc, luajit/'s
	 * struct lj_proc), opaque here, freed by the row's forget; each room
	 * reads its own through interp__room().
	 */
	const struct interp_ops *ops;
	void *room;
	bool looked;		/* this image was looked at (lazily: once) */
	/* Its runtime's frames refused (said) by a row: no row looks again until an exec. */
	bool refused;
	uint64_t since;		/* the ring's head when registered */
	char exe[PATH_MAX];	/* the binary, as the process names it */
	struct htab *pending;	/* tid -> struct pending */
	struct htab *deaths;	/* code object -> struct death list, ahead in the ring */
	/* Its execs seen ahead in the ring, in order: its memory is another image's past them. */
	uint64_t *execs;
	size_t nexecs;
};

/* A probe of an interpreter's function: one per (file, offset, entry or return, pid). */
struct probe {
	uint64_t dev, ino, off;
	bool ret;
	pid_t pid;
	struct bpf_link *link;	/* a perf-event uprobe's, or NULL ... */
	int fd;			/* ... a multi-uprobe link's (attach/umulti.h) */
};

struct interp_counts {
	uint64_t registered, refused;
	uint64_t lua_states, lua_stale;	/* Lua: states found; frames not named ("?") */
	uint64_t lua_renamed;		/* ... frames named anew before a dump */
	uint64_t allocs, frames, named, gone, incomplete;
	uint64_t lost, mismatch, order, truncated, no_frames, deaths, deaths_ahead;
};

struct interp {
	struct interp_opts o;
	struct htab *procs;	/* pid -> struct iproc */
	struct probe *probes;
	size_t nprobes;
	uint64_t scanned;	/* the ring looked ahead up to here */
	uint32_t nregistered;	/* interp_procs entries the loader made */
	struct interp_counts c;
	struct py_cache_stats *py_cache;	/* python/: its forgotten processes' cache counts */
	uint64_t *iframes;	/* the splice's scratch */
	uint32_t *seg_end;
};

static inline uint64_t key_hash(uint64_t k)
{
	return htab_hash2(k, 0x1e7);
}

/* @p's room slot given to row @ops's state @room (NULL, NULL: emptied, not freed). */
static inline void interp__set_room(struct iproc *p, const struct interp_ops *ops, void *room)
{
	p->ops = ops;
	p->room = room;
}

/* Row @ops's state of @p, or NULL when its slot holds none of that row's. */
static inline void *interp__room(const struct iproc *p, const struct interp_ops *ops)
{
	return p->ops == ops ? p->room : NULL;
}

/* interp.c: @pid's state, NULL if none (find) or if out of memory (get: made). */
struct iproc *interp__find_proc(const struct interp *ip, pid_t pid);
struct iproc *interp__get_proc(struct interp *ip, pid_t pid);
/* interp.c: forget @p's image: its code objects, its threads' frames, its deaths ahead. */
void interp__reset(struct interp *ip, struct iproc *p);

/*
 * ahead.c: py_ahead_fn (python/pycache.h) for @ctx, the struct interp: @pid's
 * first death of code object @addr after the record at ring position
 * @pos and before its next exec (its last look, @len bytes), or NULL;
 * *@live: no exec of @pid seen after @pos (its memory may be read).
 */
const struct hs_interp_code *interp__ahead(void *ctx, pid_t pid, uint64_t addr, uint64_t pos,
					   size_t *len, bool *live);
/*
 * ahead.c: the death of code object @addr of @p at ring position @pos is
 * handled: its looks up to it forgotten, and its name in @p's room's
 * (its row's code_gone).
 */
void interp__death_handled(struct iproc *p, uint64_t addr, uint64_t pos);

/*
 * look.c: program @prog on @path at file offset @off (a uretprobe if
 * @ret) for @p, or every process with -f: once per (file, offset, @ret,
 * pid). Returns
 * 0 or a negative errno.
 */
int interp__probe_at(struct interp *ip, struct iproc *p, struct bpf_program *prog, bool ret,
		     const char *path, uint64_t off);

/* interp.c: @n native frames as they are into @out (at most @max); returns how many. */
uint32_t interp__copy_native(const uint64_t *native, uint32_t n, uint64_t *out, uint32_t max);

/*
 * interp.c: @p (@pid) registered with the BPF side as @cfg says (its
 * interp_procs entry) and read from now on as @ops's runtime: IP_ON,
 * counted. 0 or a negative errno (nothing changed).
 */
int interp__turn_on(struct interp *ip, struct iproc *p, const struct interp_ops *ops,
		    const struct hs_interp_proc *cfg);
/* interp.c: -f's child @c (its room's state set up) read from now on as @ops's runtime. */
void interp__forked_on(struct interp *ip, struct iproc *c, const struct interp_ops *ops);

/*
 * interp.c: the spliced stack of @in into @out (at most @max) with the
 * STACK_* bits it earns added to *@flags (@pd: the frames it came with,
 * their cut and fault bits; @interp_cut: the interpreter frames cut),
 * counted. Returns how many frames.
 */
uint32_t interp__splice_out(struct interp *ip, const struct splice_in *in,
			    const struct pending *pd, bool interp_cut, uint64_t *out,
			    uint32_t max, uint32_t *flags);

#endif /* HEAPSNOOP_INTERP_INT_H */

/* SPDX-License-Identifier: MIT */
/*
 * interp_int.h - what interp.c, look.c, ahead.c and luainterp.c share (user/interp/):
 * a traced process's interpreter state, the code objects' deaths seen
 * ahead in the ring, and the loader's interpreter object. interp.h is the
 * outside's API.
 */
#ifndef HEAPSNOOP_INTERP_INT_H
#define HEAPSNOOP_INTERP_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "htab.h"
#include "interp/interp.h"
#include "interp/luajit/ljproc.h"
#include "interp/lua/luaproc.h"
#include "interp/python/pycache.h"
#include "interp/python/pyfind.h"

struct bpf_program;
struct mapset;

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
	enum hs_interp_kind kind;	/* what it runs, once IP_ON */
	struct lua_proc *lua;		/* HS_INTERP_LUA: PUC Lua */
	struct lj_proc *lj;		/* ... LuaJIT */
	bool lua_refused;		/* a Lua VM refused (said) in this image */
	bool looked;		/* this image was looked at (lazily: once) */
	bool refused;		/* its CPython's frames refused, said: not again until an exec */
	uint64_t since;		/* the ring's head when registered */
	char exe[PATH_MAX];	/* the binary, as the process names it */
	struct py_image img;	/* link-time addresses */
	uint64_t bias;		/* ... + bias: the process's */
	struct py_cache *cache;
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
	struct py_cache_stats cache;	/* of processes forgotten */
	uint64_t *iframes;	/* the splice's scratch */
	uint32_t *seg_end;
};

static inline uint64_t key_hash(uint64_t k)
{
	return htab_hash2(k, 0x1e7);
}

/* interp.c: @pid's state, NULL if none (find) or if out of memory (get: made). */
struct iproc *interp__find_proc(const struct interp *ip, pid_t pid);
struct iproc *interp__get_proc(struct interp *ip, pid_t pid);
/* interp.c: forget @p's image: its code objects, its threads' frames, its deaths ahead. */
void interp__reset(struct interp *ip, struct iproc *p);

/*
 * ahead.c: py_ahead_fn (pycache.h) for @ctx, the struct interp: @pid's
 * first death of code object @addr after the record at ring position
 * @pos and before its next exec (its last look, @len bytes), or NULL;
 * *@live: no exec of @pid seen after @pos (its memory may be read).
 */
const struct hs_interp_code *interp__ahead(void *ctx, pid_t pid, uint64_t addr, uint64_t pos,
					   size_t *len, bool *live);
/*
 * ahead.c: the death of code object @addr of @p at ring position @pos is
 * handled: its looks up to it forgotten, and its name in @p's cache.
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
 * luainterp.c: Lua's part. interp__look_lua: a Lua VM in @p's executable
 * or a liblua it maps (@pm: its files), registered with the BPF side;
 * true if there is one (read, or refused and said). Without the Lua
 * walker (--interp python), LuaJIT's allocator alone is probed. interp__forked_lua:
 * -f's child @c of Lua process @pp. interp__lua_splice: an allocation of
 * Lua process @p (@pd its frames, or NULL) as interp__splice() says.
 */
bool interp__look_lua(struct interp *ip, struct iproc *p, const struct mapset *pm,
		      enum interp_when when);
void interp__forked_lua(struct interp *ip, struct iproc *pp, struct iproc *c);
uint32_t interp__lua_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			    struct pending *pd, const uint64_t *native, uint32_t n, bool native_cut,
			    const struct unwind_grab *grab, uint64_t *out, uint32_t max,
			    uint32_t *flags);

/*
 * ljinterp.c: LuaJIT in @p's file @path (@shown: as the process names
 * it; mapped with @bias), found by interp__look_lua at @when: its allocator probed, said;
 * true (read, or refused and said).
 */
bool interp__look_luajit(struct interp *ip, struct iproc *p, const char *path, const char *shown,
			 const struct lua_vm_info *vm, uint64_t bias, enum interp_when when);
/* ljinterp.c: LuaJIT's interp__forked_lua and interp__lua_splice. */
void interp__forked_lj(struct interp *ip, struct iproc *pp, struct iproc *c);
uint32_t interp__lj_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			   struct pending *pd, const uint64_t *native, uint32_t n, bool native_cut,
			   uint64_t *out, uint32_t max, uint32_t *flags);

#endif /* HEAPSNOOP_INTERP_INT_H */

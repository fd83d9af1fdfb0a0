/* SPDX-License-Identifier: MIT */
/*
 * ops.h - the table of runtimes: what the interpreters' core (interp.c,
 * look.c) asks of each runtime's room (user/interp/python/, lua/,
 * luajit/), one row (struct interp_ops) per runtime, the rows in
 * rooms.c in the order they look. The core keeps the process table
 * (struct iproc: interp_int.h), the ring's records, the look ahead and
 * the splice; a room finds its runtime in a process, registers it with
 * the BPF side (bpf/interp.bpf.h: struct hs_interp_proc), names its frames
 * and places them. A new runtime is a new room and a row: nothing in
 * the core tests which runtime a process runs. docs/DESIGN.md, "The
 * rooms".
 */
#ifndef HEAPSNOOP_INTERP_OPS_H
#define HEAPSNOOP_INTERP_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heapsnoop/event.h"
#include "heapsnoop/interpframe.h"
#include "interp/interp.h"

struct interp;
struct iproc;
struct lt_header;
struct lua_vm_info;
struct mapset;
struct pending;
struct pl_counts;
struct plread_image;
struct unwind_grab;
struct xstack;

struct interp_ops {
	const char *name;		/* "python", "lua", "luajit" */
	/*
	 * Find the runtime among @p's mapped files @pm (at @when) and attach:
	 * register it with the BPF side (interp__turn_on()), probe what it
	 * needs, say what was found. True when found, read or refused (said):
	 * no later row looks. NULL: found by another row's look (LuaJIT: the
	 * Lua finder, luafind.c, tells PUC Lua from LuaJIT in one search).
	 */
	bool (*look)(struct interp *ip, struct iproc *p, const struct mapset *pm,
		     enum interp_when when);
	/*
	 * A Lua VM that Lua's look found (lua/luafind.h's @vm, in @p's file
	 * @path, @shown as the process names it, mapped with @bias) and that
	 * this row reads: attached, said, true (read, or refused and said).
	 * Lua's look hands it to the first row that has one (LuaJIT's).
	 */
	bool (*lua_vm)(struct interp *ip, struct iproc *p, const char *path, const char *shown,
		       const struct lua_vm_info *vm, uint64_t bias, enum interp_when when);
	/* -f: child @c of @pp, which runs it (IP_ON): the same image, set up (interp__forked_on()). */
	void (*fork)(struct interp *ip, struct iproc *pp, struct iproc *c);
	/*
	 * Allocation @ev (ring sequence @seq) of @p: its frames @pd (NULL:
	 * none came with it) named and spliced among its @n native frames,
	 * as interp__splice() says; the core has checked what every runtime
	 * shares (lost, mismatched, registered after it).
	 */
	uint32_t (*splice)(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			   uint64_t seq, struct pending *pd, const uint64_t *native, uint32_t n,
			   bool native_cut, const struct unwind_grab *grab, uint64_t *out,
			   uint32_t max, uint32_t *flags);
	/*
	 * Forget @p's image: the room's state of it (@p's slot, interp_int.h's
	 * interp__room()) freed, its counts kept in @ip. The slot's row's, at
	 * each reset; the core empties the slot after.
	 */
	void (*forget)(struct interp *ip, struct iproc *p);
	/* interp__grab()'s native frame, [*@lo, *@hi); false: none. NULL: never. */
	bool (*grab)(struct iproc *p, uint64_t *lo, uint64_t *hi);
	/* Code object @addr of @p died (HS_EV_INTERP_CODE, handled in order): forget its name. NULL: none. */
	void (*code_gone)(struct iproc *p, uint64_t addr);
	/*
	 * A dump is about to be written: @p's names given before what the
	 * room has learned since (Lua's global names) brought up to date,
	 * through interp_opts.frame_rename. NULL: none to bring.
	 */
	void (*settle)(struct interp *ip, struct iproc *p);
	/* -v: the room's own counts. NULL: none. */
	void (*stats)(const struct interp *ip, FILE *out);
	/*
	 * The command's environment: what launch mode and --preload set
	 * (setenv()) before starting command @cmd (as execvp() finds it; NULL:
	 * none known) so that this runtime's frames and allocations are seen,
	 * when @o asks for its frames (@o's python, lua and verbose alone are
	 * read); said. 0 or a negative errno. NULL: nothing to set.
	 */
	int (*command_env)(const struct interp_opts *o, const char *cmd);

	/*
	 * heapsnoop --preload's reader (python/plpython_int.h's images: a
	 * process's live table from its collector; the room's state of an
	 * image in its slot, pi->room). pl_title, pl_loop: the runtime and
	 * its interpreter loop as messages name them ("Python", "eval
	 * loop"). pl_is: is an image whose header says @py_version and
	 * @lua_vm this runtime's (NULL: not read under --preload)? pl_new:
	 * the room's state of @pi made (its header pi->h set), or made ready
	 * for its binary read again; 0 or -ENOMEM. pl_free: that state freed
	 * (NULL: none made). pl_anchor: the address its collector names its
	 * binary by (the eval loop, lua_newstate). pl_read: its binary at
	 * @path, mapped at @start from file offset @off, read (@anchor in
	 * it) and checked against its header: 0 or -errno, *@why says.
	 * pl_copy: a fork child's binary its parent @parent's. pl_record: a
	 * record of its collector's in the table (@w[@n], its tag @w[0])
	 * taken, if it is this room's (true). pl_resolve: stack @id
	 * (@f[@depth], cut bits @cut) named, spliced and kept (NULL: no
	 * memory). pl_said: -v's line once its binary is read. pl_finish:
	 * the closing lines of its counts @c over every image it read (-v:
	 * @verbose).
	 */
	const char *pl_title, *pl_loop;
	bool (*pl_is)(uint32_t py_version, uint32_t lua_vm);
	int (*pl_new)(struct plread_image *pi);
	void (*pl_free)(struct plread_image *pi);
	uint64_t (*pl_anchor)(const struct lt_header *h);
	int (*pl_read)(struct plread_image *pi, const char *path, uint64_t start, uint64_t off,
		       uint64_t anchor, char *why, size_t cap);
	int (*pl_copy)(struct plread_image *pi, const struct plread_image *parent);
	bool (*pl_record)(struct plread_image *pi, const uint64_t *w, uint32_t n);
	struct xstack *(*pl_resolve)(struct plread_image *pi, uint32_t id, const uint64_t *f,
				     uint32_t depth, uint32_t cut);
	void (*pl_said)(const struct plread_image *pi);
	void (*pl_finish)(const struct pl_counts *c, bool verbose);
};

/* rooms.c: the rows, in the order they look; NULL-terminated. */
extern const struct interp_ops *const interp_rooms[];

#endif /* HEAPSNOOP_INTERP_OPS_H */

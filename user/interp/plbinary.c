// SPDX-License-Identifier: MIT
/*
 * plbinary.c - the binary of a --preload image's interpreter (its CPython
 * eval loop, its Lua's lua_newstate), found for plread.c and read by
 * its row (ops.h's pl_read, pl_copy: python/plpython.c, lua/pllua.c): a
 * fork child's is its parent's; else by the process's mappings
 * (/proc/PID/maps, reached as the tracer reaches a mapping's file:
 * procmaps.c); else, when the process has ended (a zombie has no
 * mappings) or ended while its binary was read (its map_files gone
 * between two opens), by the module records of its own table.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "heapsnoop/livedump.h"
#include "interp/plread_int.h"
#include "maps/procmaps.h"
#include "mapset.h"

/* @pi's binary read from @path, mapped at @start from file offset @off (its row's): 0 or -errno. */
static int read_binary(struct plread_image *pi, const char *path, uint64_t start, uint64_t off,
		       uint64_t eval, char *why, size_t cap)
{
	return pi->ops->pl_read(pi, path, start, off, eval, why, cap);
}

struct mod_find {
	uint64_t eval;
	struct lt_mod m;
	bool found;
};

static int mod_of(void *arg, const struct lt_mod *m)
{
	struct mod_find *f = arg;

	if (f->eval < m->start || f->eval >= m->end)
		return 0;
	f->m = *m;
	f->found = true;
	return 1;
}

/*
 * The process has ended (a child that lived less than heapsnoop's look):
 * the binary by the table's own module records, in its root if that is
 * still there, else as the path says.
 */
static int binary_by_table(struct plread_image *pi, uint64_t eval, char *why, size_t cap)
{
	struct mod_find f = { .eval = eval };
	char path[PATH_MAX + 32];
	struct stat st;

	lt_modules(pi->view, mod_of, &f);
	if (!f.found)
		return -ENOENT;
	/* A path the table names: a regular file only (never a FIFO that blocks). */
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pi->pid, f.m.path);
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		snprintf(path, sizeof(path), "%s", f.m.path);
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -ENOENT;
	return read_binary(pi, path, f.m.start, f.m.off, eval, why, cap);
}

/*
 * The binary holding the eval loop at @eval in @pi's process, read: a
 * fork child's is its parent's (@parent, as its header says); else by
 * the process's mappings, or its table's when it has ended already.
 * Returns 0 or -errno.
 */
int plread_image__find_binary(struct plread_image *pi, pid_t parent, uint64_t eval, char *why,
			      size_t cap)
{
	char path[PATH_MAX];
	const struct mapping *m;
	struct mapset *ms = NULL;
	int err;

	for (struct plread_image *o = pi->py->images; parent && o; o = o->next)
		if (o->pid == parent && o->named && o->ops->pl_anchor(o->h) == eval)
			return o->ops->pl_copy(pi, o);
	err = proc_maps__load_files(pi->pid, &ms);
	m = err ? NULL : mapset__find(ms, eval);
	if (m) {
		err = proc_maps__reach(pi->pid, m, path, sizeof(path));
		if (!err)
			err = read_binary(pi, path, m->start, m->offset, eval, why, cap);
	}
	mapset__free(ms);
	if (m && !err)
		return 0;
	/*
	 * Ended already (a zombie has no mappings), or while its binary was
	 * read (its map_files gone): its table says where it was.
	 */
	if (m && (err = pi->ops->pl_new(pi)))
		return err;
	err = binary_by_table(pi, eval, why, cap);
	if (err == -ENOENT && !*why)
		snprintf(why, cap, "no mapping of its process nor module of its table holds "
			 "0x%" PRIx64, eval);
	return err;
}

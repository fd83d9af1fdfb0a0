// SPDX-License-Identifier: MIT
/*
 * pylook.c - a traced process's CPython found and registered (Python's
 * look, ops.h): its executable or its libpython3.x read (pyfind.c), its
 * C library's thread data (libctsd.c), its code objects' destructor
 * probed, its entry in the BPF map interp_procs made; what its allocator
 * hides said (pymalloc). docs/DESIGN.md, "Interpreter frames".
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attach/umulti.h"
#include "heapsnoop.skel.h"
#include "interp/interp_int.h"
#include "interp/python/libctsd.h"
#include "interp/python/pyproc.h"
#include "msg.h"
#include "maps/procmaps.h"
#include "text.h"

/*
 * The mappings that may hold @pid's CPython, into @v (2 at most): its
 * executable, then a libpython3.x (an embedder, or a python built
 * --enable-shared).
 */
static int python_mappings(pid_t pid, const struct mapset *pm, const struct mapping **v)
{
	char link[64];
	struct stat st;
	int n = 0;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	if (!stat(link, &st))
		for (size_t i = 0; i < pm->n; i++)
			if (pm->v[i].dev == st.st_dev && pm->v[i].ino == st.st_ino) {
				v[n++] = &pm->v[i];
				break;
			}
	for (size_t i = 0; i < pm->n; i++)
		if (!strncmp(path_base(pm->v[i].path), "libpython3.", 11)) {
			v[n++] = &pm->v[i];
			break;
		}
	return n;
}

/* The load bias of the image @m maps (0 for a non-PIE executable). */
static uint64_t load_bias(const struct py_image *img, const struct mapping *m)
{
	return img->pie ? m->start - m->offset - img->vaddr_off : 0;
}

/* @pid's PYTHONMALLOC at its start (/proc/PID/environ), into @val; false: not set. */
static bool pythonmalloc(pid_t pid, char *val, size_t cap)
{
	char path[64], buf[65536];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *s = buf; s < buf + n; s += strlen(s) + 1)
		if (!strncmp(s, "PYTHONMALLOC=", 13)) {
			snprintf(val, cap, "%s", s + 13);
			return true;
		}
	return false;
}

/*
 * Say whether CPython's own allocator keeps @p's small objects out of
 * sight: pymalloc serves objects of up to 512 bytes from arenas it maps
 * itself, and LTO inlined its fast path into every call site, so no probe
 * sees them one by one. In a process not started yet (@running false)
 * its environment says which allocator it will use; in a running one the
 * hook it calls through says which it uses.
 */
static void say_allocator(struct iproc *p, bool running)
{
	char env[64] = "", v[32], how[96];
	bool set = pythonmalloc(p->pid, env, sizeof(env)), pymalloc;
	uint64_t hook = 0;

	if (running && py_of(p)->img.obj_hook) {
		struct iovec l = { &hook, sizeof(hook) };
		struct iovec r = { (void *)(uintptr_t)(py_of(p)->img.obj_hook + py_of(p)->bias), sizeof(hook) };

		if (process_vm_readv(p->pid, &l, 1, &r, 1, 0) != sizeof(hook))
			hook = 0;
	}
	if (hook)
		pymalloc = hook == py_of(p)->img.pymalloc + py_of(p)->bias;
	else
		pymalloc = !set || !strcmp(env, "pymalloc") || !strcmp(env, "debug") ||
			   !strcmp(env, "pymalloc_debug");
	py_layout__version_str(py_of(p)->img.version, v, sizeof(v));
	if (py_of(p)->img.layout.free_threaded) {
		elog("pid %d: Python %s is a free-threaded build: ITS OBJECTS ARE NOT LIVE BLOCKS "
		     "HERE: it takes them from its own mimalloc heaps (it refuses "
		     "PYTHONMALLOC=malloc, and heapsnoop leaves it unset for such a command); what "
		     "it and its extensions take from the C library is traced, with its Python "
		     "frames", p->pid, v);
		return;
	}
	if (!pymalloc) {
		if (set)
			elog("pid %d: Python %s allocates its objects with PYTHONMALLOC=%s: each "
			     "is a live block here", p->pid, v, env);
		return;
	}
	if (set)
		snprintf(how, sizeof(how), "PYTHONMALLOC=%s", env);
	else
		snprintf(how, sizeof(how), "PYTHONMALLOC not set");
	elog("pid %d: Python %s uses pymalloc (%s): ITS OBJECTS OF UP TO 512 BYTES ARE NOT "
	     "LIVE BLOCKS HERE: pymalloc carves them out of arenas it maps itself, by code "
	     "inlined at every call site, which no probe sees; larger objects and other "
	     "allocations are traced. To see every object, run it with PYTHONMALLOC=malloc "
	     "(heapsnoop sets it for a command it starts)", p->pid, v, how);
}

/*
 * A running @p's thread-state key as the table placed it (pyfind.c): a
 * Py_tss_t, its _is_initialized 0 (Python not started yet) or 1 and then
 * a key glibc can hold (below PTHREAD_KEYS_MAX, 1024). False, with the
 * reason in @why, where the words there are something else: a build
 * whose runtime state is not the layout of its version.
 */
static bool tss_key_holds(const struct iproc *p, char *why, size_t cap)
{
	uint32_t k[2];
	struct iovec l = { k, sizeof(k) };
	struct iovec r = { (void *)(uintptr_t)(py_of(p)->img.tss_key + py_of(p)->bias), sizeof(k) };

	if (process_vm_readv(p->pid, &l, 1, &r, 1, 0) != sizeof(k))
		return true;	/* not readable now: the BPF walk reads it as it can */
	if (k[0] == 0 || (k[0] == 1 && k[1] < 1024))
		return true;
	snprintf(why, cap, "its thread-state key (_PyRuntime+%#llx) holds {%u, %u}, not a "
		 "Py_tss_t: a build whose runtime state is not the layout of its version",
		 (unsigned long long)(py_of(p)->img.tss_key - py_of(p)->img.runtime), k[0], k[1]);
	return false;
}

/* The destructor's probe for @p's binary @path, once per (file, pid). */
static int probe_destructor(struct interp *ip, struct iproc *p, const char *path)
{
	return interp__probe_at(ip, p, ip->o.skel->progs.interp_code_gone, false, path,
				py_of(p)->img.code_dealloc_off);
}

/* What the BPF walk needs of @p (include/heapsnoop/interpframe.h). */
static void fill_config(const struct interp *ip, const struct iproc *p, const struct libc_tsd *tsd,
			struct hs_interp_proc *cfg)
{
	const struct py_layout *l = &py_of(p)->img.layout;
	struct hs_py_proc *py = &cfg->py;

	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = HS_INTERP_PYTHON;
	cfg->max_frames = ip->o.max_frames;
	py->tss_key = py_of(p)->img.tss_key + py_of(p)->bias;
	py->tsd_first = tsd->first;
	py->tsd_second = tsd->second;
	py->tsd_entry = tsd->entry;
	py->tsd_data = tsd->data;
	py->ts_frame = l->ts_frame;
	py->cf_frame = l->cf_frame;
	py->fr_code = l->fr_code;
	py->fr_previous = l->fr_previous;
	py->fr_instr = l->fr_instr;
	py->fr_owner = l->fr_owner;
	py->fr_entry = l->fr_entry;
	py->fr_read = l->fr_read;
	py->co_code = l->co_code;
	py->co_qualname = l->co_qualname;
	py->co_filename = l->co_filename;
	py->co_linetable = l->co_linetable;
	py->co_firstlineno = l->co_firstlineno;
	py->co_firsttraceable = l->co_firsttraceable;
	py->str_length = l->str_length;
	py->str_state = l->str_state;
	py->str_ascii = l->str_ascii;
	py->str_compact = l->str_compact;
	py->bytes_size = l->bytes_size;
	py->bytes_data = l->bytes_data;
	py->fr_code_tag = l->fr_code_tag;
	py->fr_tlbc = l->fr_tlbc;
	py->co_tlbc = l->co_tlbc;
	py->str_state_shift = l->str_state_shift;
}

/* Register @p with the BPF side: its allocations' frames are read from now on. */
static int turn_on(struct interp *ip, struct iproc *p, const struct libc_tsd *tsd, const char *path)
{
	struct hs_interp_proc cfg;
	int err;

	py_of(p)->cache = py_cache__new(p->pid, &py_of(p)->img.layout, py_of(p)->img.code_type + py_of(p)->bias,
				 interp__ahead, ip);
	p->pending = htab__new(8, NULL, NULL);
	p->deaths = htab__new(8, NULL, NULL);
	if (!py_of(p)->cache || !p->pending || !p->deaths)
		return -ENOMEM;
	err = probe_destructor(ip, p, path);
	if (err)
		return err;
	fill_config(ip, p, tsd, &cfg);
	return interp__turn_on(ip, p, &interp_python_ops, &cfg);
}

/*
 * Python's look (ops.h): a CPython in @p's executable or a libpython3.x
 * among its files @pm, read (pyfind.c), its C library's thread data
 * found, registered; what it found or could not said. True: a CPython
 * (read, refused or waiting for its C library).
 */
bool interp__look_python(struct interp *ip, struct iproc *p, const struct mapset *pm,
			 enum interp_when when)
{
	const struct mapping *m = NULL, *cand[2];
	pid_t pid = p->pid;
	struct libc_tsd tsd;
	char path[PATH_MAX], libc[PATH_MAX], why[512], v[32];
	int err;

	if (!ip->o.python)
		return false;
	if (!py_of(p)) {
		struct py_proc *py = calloc(1, sizeof(*py));

		if (!py)
			return false;
		interp__set_room(p, &interp_python_ops, py);
	}
	err = -ENOENT;
	for (int i = 0, n = python_mappings(pid, pm, cand);
	     i < n && err == -ENOENT; i++) {
		m = cand[i];
		if (proc_maps__reach(pid, m, path, sizeof(path))) {
			elog("pid %d: %s cannot be reached from here: its Python frames are not read",
			     pid, m->path);
			return true;
		}
		err = py_image__read(path, &py_of(p)->img, why, sizeof(why));
	}
	if (err == -ENOENT) {
		free(py_of(p));	/* not a CPython */
		interp__set_room(p, NULL, NULL);
		return false;
	}
	snprintf(p->exe, sizeof(p->exe), "%s", m->path);
	py_layout__version_str(py_of(p)->img.version, v, sizeof(v));
	if (err) {
		ip->c.refused++;
		p->refused = true;
		elog("pid %d runs %s: its Python frames are not read: %s%s", pid, m->path, why,
		     err == -EINVAL ? " (please report this with heapsnoop -V and the binary's "
		     "package version)" : "");
		return true;
	}
	py_of(p)->bias = load_bias(&py_of(p)->img, m);
	if (when == INTERP_RUNNING && !tss_key_holds(p, why, sizeof(why))) {
		ip->c.refused++;
		p->refused = true;
		elog("pid %d runs %s: its Python frames are not read: %s (please report this with "
		     "heapsnoop -V and the binary's package version)", pid, m->path, why);
		return true;
	}
	/* Its thread states are found through its C library's thread data. */
	err = -ENOENT;
	for (size_t i = 0; i < pm->n; i++) {
		if (!proc_maps__is_libc(pm->v[i].path))
			continue;
		err = proc_maps__reach(pid, &pm->v[i], libc, sizeof(libc)) ? -ESRCH :
		      libc_tsd__read(libc, &tsd);
		if (err) {
			ip->c.refused++;
			elog("pid %d runs Python %s: its C library %s is not glibc, or one that does "
			     "not describe its threads (_thread_db_*): its Python frames are not read",
			     pid, v, pm->v[i].path);
		}
		break;
	}
	if (err == -ENOENT && when == INTERP_AT_EXEC) {
		p->state = IP_WAIT_LIBC;	/* looked at again once its loader maps it */
		return true;
	}
	if (err == -ENOENT) {
		ip->c.refused++;
		elog("pid %d runs Python %s with no C library heapsnoop knows: its frames are not "
		     "read", pid, v);
	}
	if (err)
		return true;
	err = turn_on(ip, p, &tsd, path);
	if (err) {
		ip->c.refused++;
		elog("pid %d runs Python %s (%s): its frames cannot be read: %s", pid, v, p->exe,
		     strerror(-err));
		interp__reset(ip, p);
		p->looked = true;
		return true;
	}
	elog("pid %d runs Python %s (%s): its frames are read%s", pid, v, p->exe,
	     py_of(p)->img.debug_offsets ? " (its layout from its _Py_DebugOffsets)" : "");
	say_allocator(p, when == INTERP_RUNNING);
	return true;
}

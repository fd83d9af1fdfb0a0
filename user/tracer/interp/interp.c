// SPDX-License-Identifier: MIT
/*
 * interp.c - interpreter frames in the loader (see interp.h): the traced
 * processes that run CPython, found, registered for the BPF walk and
 * their code objects' destructor probed; the walk's records kept for the
 * allocation they come with, named, and spliced among its native frames.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "heapsnoop.skel.h"
#include "htab.h"
#include "interp/interp.h"
#include "interp/libctsd.h"
#include "interp/luaproc.h"
#include "interp/luasegs.h"
#include "interp/pycache.h"
#include "interp/pyfind.h"
#include "interp/splice.h"
#include "msg.h"
#include "procmaps.h"
#include "stacks.h"
#include "text.h"

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
	struct lua_proc *lua;		/* HS_INTERP_LUA */
	bool looked;		/* this image was looked at (lazily: once) */
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

/* A destructor's probe: one per (file, pid). */
struct probe {
	uint64_t dev, ino;
	pid_t pid;
	struct bpf_link *link;
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

static uint64_t key_hash(uint64_t k)
{
	return htab_hash2(k, 0x1e7);
}

struct interp *interp__new(const struct interp_opts *o)
{
	struct interp *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return NULL;
	ip->o = *o;
	if (!ip->o.max_frames || ip->o.max_frames > HS_INTERP_MAX_FRAMES)
		ip->o.max_frames = HS_INTERP_MAX_FRAMES;
	ip->procs = htab__new(16, NULL, NULL);
	ip->iframes = calloc(HS_INTERP_MAX_FRAMES, sizeof(*ip->iframes));
	ip->seg_end = calloc(HS_INTERP_MAX_FRAMES + 1, sizeof(*ip->seg_end));
	if (!ip->procs || !ip->iframes || !ip->seg_end) {
		interp__free(ip);
		return NULL;
	}
	return ip;
}

static void free_deaths(struct htab *h)
{
	struct death *d, *next;
	size_t pos = 0;

	while (h && (d = htab__next(h, &pos, NULL)))
		for (; d; d = next) {
			next = d->next;
			free(d);
		}
	htab__free(h);
}

static void free_pending(struct htab *h)
{
	struct pending *p;
	size_t pos = 0;

	while (h && (p = htab__next(h, &pos, NULL)))
		free(p);
	htab__free(h);
}

static void add_cache_stats(struct interp *ip, const struct py_cache *c)
{
	struct py_cache_stats st;

	if (!c)
		return;
	py_cache__stats(c, &st);
	ip->cache.hits += st.hits;
	ip->cache.reads += st.reads;
	ip->cache.from_death += st.from_death;
	ip->cache.gone += st.gone;
	ip->cache.live_lost += st.live_lost;
}

/* Forget @p's image: its code objects, its threads' frames, its deaths ahead. */
static void reset(struct interp *ip, struct iproc *p)
{
	add_cache_stats(ip, p->cache);
	py_cache__free(p->cache);
	p->cache = NULL;
	free_pending(p->pending);
	p->pending = NULL;
	free_deaths(p->deaths);
	p->deaths = NULL;
	lua_proc__free(p->lua);
	p->lua = NULL;
	if (p->state == IP_ON && ip->nregistered) {
		ip->nregistered--;
		ip->o.skel->bss->interp_procs_n = ip->nregistered;
	}
	p->state = IP_OFF;
	p->kind = HS_INTERP_NONE;
	p->looked = false;
}

void interp__free(struct interp *ip)
{
	struct iproc *p;
	size_t pos = 0;

	if (!ip)
		return;
	while (ip->procs && (p = htab__next(ip->procs, &pos, NULL))) {
		reset(ip, p);
		free(p->execs);
		free(p);
	}
	htab__free(ip->procs);
	for (size_t i = 0; i < ip->nprobes; i++)
		bpf_link__destroy(ip->probes[i].link);
	free(ip->probes);
	free(ip->iframes);
	free(ip->seg_end);
	free(ip);
}

static struct iproc *find_proc(const struct interp *ip, pid_t pid)
{
	return htab__find(ip->procs, key_hash((uint32_t)pid), (uint32_t)pid);
}

static struct iproc *get_proc(struct interp *ip, pid_t pid)
{
	struct iproc *p = find_proc(ip, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (htab__add(ip->procs, key_hash((uint32_t)pid), (uint32_t)pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* --- looking for an interpreter in a process ----------------------------- */

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

	if (running && p->img.obj_hook) {
		struct iovec l = { &hook, sizeof(hook) };
		struct iovec r = { (void *)(uintptr_t)(p->img.obj_hook + p->bias), sizeof(hook) };

		if (process_vm_readv(p->pid, &l, 1, &r, 1, 0) != sizeof(hook))
			hook = 0;
	}
	if (hook)
		pymalloc = hook == p->img.pymalloc + p->bias;
	else
		pymalloc = !set || !strcmp(env, "pymalloc") || !strcmp(env, "debug") ||
			   !strcmp(env, "pymalloc_debug");
	py_layout__version_str(p->img.version, v, sizeof(v));
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
 * Program @prog on @path at file offset @off (a uretprobe if @ret) for
 * @p, or every process with -f: once per (file, pid).
 */
static int probe_at(struct interp *ip, struct iproc *p, struct bpf_program *prog, bool ret,
		    const char *path, uint64_t off)
{
	pid_t pid = ip->o.follow_forks ? -1 : p->pid;
	struct bpf_link *link;
	struct probe *v;
	struct stat st;

	if (stat(path, &st))
		return -errno;
	for (size_t i = 0; i < ip->nprobes; i++)
		if (ip->probes[i].dev == st.st_dev && ip->probes[i].ino == st.st_ino &&
		    (ip->probes[i].pid == pid || ip->probes[i].pid == -1))
			return 0;
	link = bpf_program__attach_uprobe(prog, ret, pid, path, (size_t)off);
	if (!link)
		return -errno;
	v = realloc(ip->probes, (ip->nprobes + 1) * sizeof(*v));
	if (!v) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	ip->probes = v;
	ip->probes[ip->nprobes++] = (struct probe){ st.st_dev, st.st_ino, pid, link };
	return 0;
}

/* The destructor's probe for @p's binary @path, once per (file, pid). */
static int probe_destructor(struct interp *ip, struct iproc *p, const char *path)
{
	return probe_at(ip, p, ip->o.skel->progs.interp_code_gone, false, path,
			p->img.code_dealloc_off);
}

/* What the BPF walk needs of @p (include/heapsnoop/interp.h). */
static void fill_config(const struct interp *ip, const struct iproc *p, const struct libc_tsd *tsd,
			struct hs_interp_proc *cfg)
{
	const struct py_layout *l = &p->img.layout;
	struct hs_py_proc *py = &cfg->py;

	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = HS_INTERP_PYTHON;
	cfg->max_frames = ip->o.max_frames;
	py->tss_key = p->img.tss_key + p->bias;
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
}

static struct death *death_ahead(struct iproc *p, uint64_t addr, uint64_t pos);
static uint64_t exec_after(const struct iproc *p, uint64_t pos);
static const struct hs_interp_code *ahead(void *ctx, pid_t pid, uint64_t addr, uint64_t pos,
					  size_t *len, bool *live);

/* Register @p with the BPF side: its allocations' frames are read from now on. */
static int turn_on(struct interp *ip, struct iproc *p, const struct libc_tsd *tsd, const char *path)
{
	struct hs_interp_proc cfg;
	uint32_t pid = (uint32_t)p->pid;
	int err;

	p->cache = py_cache__new(p->pid, &p->img.layout, p->img.code_type + p->bias, ahead, ip);
	p->pending = htab__new(8, NULL, NULL);
	p->deaths = htab__new(8, NULL, NULL);
	if (!p->cache || !p->pending || !p->deaths)
		return -ENOMEM;
	err = probe_destructor(ip, p, path);
	if (err)
		return err;
	fill_config(ip, p, tsd, &cfg);
	if (bpf_map__update_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg,
				 sizeof(cfg), BPF_ANY))
		return -errno;
	p->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	p->state = IP_ON;
	p->kind = HS_INTERP_PYTHON;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
	ip->c.registered++;
	return 0;
}

/* --- Lua ------------------------------------------------------------------- */

/* Register @p's Lua VM (its file @path) with the BPF side, its state known or not yet. */
static int turn_on_lua(struct interp *ip, struct iproc *p, const char *path)
{
	struct hs_interp_proc cfg;
	uint32_t pid = (uint32_t)p->pid;
	int err;

	p->pending = htab__new(8, NULL, NULL);
	if (!p->pending)
		return -ENOMEM;
	/* Launch mode: the state is made later, by lua_newstate (luaL_newstate's too). */
	err = probe_at(ip, p, ip->o.skel->progs.lua_newstate_ret, true, path,
		       lua_proc__vm(p->lua)->newstate);
	if (err)
		return err;
	memset(&cfg, 0, sizeof(cfg));
	cfg.kind = HS_INTERP_LUA;
	cfg.max_frames = ip->o.max_frames;
	lua_proc__bpf(p->lua, &cfg.lua);
	if (bpf_map__update_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg,
				 sizeof(cfg), BPF_ANY))
		return -errno;
	p->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	p->state = IP_ON;
	p->kind = HS_INTERP_LUA;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
	ip->c.registered++;
	return 0;
}

/*
 * Look for a Lua VM in @p's executable or a liblua it maps (@pm: its
 * files); returns true if there is one (then read, or refused and said).
 */
static bool look_lua(struct interp *ip, struct iproc *p, const struct mapset *pm,
		     enum interp_when when)
{
	char link[64], path[PATH_MAX], root[64];
	struct lua_vm_info vm;
	const struct mapping *m = NULL;
	struct stat exe;
	bool have_exe;
	int err = -ENOENT;

	snprintf(link, sizeof(link), "/proc/%d/exe", p->pid);
	have_exe = !stat(link, &exe);
	/* Its debug files are looked for in its own root. */
	snprintf(root, sizeof(root), "/proc/%d/root", p->pid);
	for (size_t i = 0; i < pm->n && err == -ENOENT; i++) {
		m = &pm->v[i];
		if (!(have_exe && m->dev == exe.st_dev && m->ino == exe.st_ino) &&
		    strncmp(path_base(m->path), "liblua", 6))
			continue;
		if (proc_maps__reach(p->pid, m, path, sizeof(path)))
			continue;
		err = lua_find__file(path, root, &vm);
	}
	if (err == -ENOENT)
		return false;
	if (err == -ENOTSUP) {
		elog("pid %d runs %s, a Lua heapsnoop does not read (5.2 or 5.3): its Lua frames "
		     "are not read", p->pid, m->path);
		return true;
	}
	if (err) {
		ip->c.refused++;
		elog("pid %d runs Lua (%s), whose interpreter loop was not found (%s): its Lua "
		     "frames are not read", p->pid, m->path, strerror(-err));
		return true;
	}
	if (vm.vm == LUA_VM_JIT) {
		elog("pid %d runs LuaJIT (%s): its Lua frames are not read (not yet supported); "
		     "LuaJIT allocates its objects with its own allocator, not malloc: they are "
		     "not live blocks here", p->pid, m->path);
		return true;
	}
	p->lua = lua_proc__new(p->pid, &vm, m->start - m->offset);
	if (!p->lua) {
		ip->c.refused++;
		return true;
	}
	if (when == INTERP_RUNNING && !lua_proc__find_state_stack(p->lua))
		ip->c.lua_states++;
	err = turn_on_lua(ip, p, path);
	if (err) {
		ip->c.refused++;
		elog("pid %d runs %s (%s): its frames cannot be read: %s", p->pid,
		     lua_layout__of(vm.vm)->name, m->path, strerror(-err));
		reset(ip, p);
		p->looked = true;
		return true;
	}
	elog("pid %d runs %s (%s): its frames are read (its interpreter loop by %s)%s", p->pid,
	     lua_layout__of(vm.vm)->name, m->path,
	     vm.exec_by_symbol ? "its debug file's symbol" : "the largest FDE",
	     when != INTERP_RUNNING ? "" : lua_proc__has_state(p->lua) ? "" :
	     ", once its state is found in an allocation's registers or stack");
	return true;
}

/*
 * @p's Lua state, if known; else found now: lua_newstate's return, which
 * the BPF side kept (launch mode), or the registers and stack of
 * allocation @ev (-p: a thread of the state is in one of them).
 */
static bool lua_state(struct interp *ip, struct iproc *p, const struct hs_event *ev)
{
	const struct hs_user_stack *us = (const void *)((const char *)ev + HS_EVENT_HDR_SIZE);
	struct hs_interp_proc cfg;
	uint32_t pid = (uint32_t)p->pid;

	if (lua_proc__has_state(p->lua))
		return true;
	if (!bpf_map__lookup_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg,
				  sizeof(cfg), 0) &&
	    cfg.kind == HS_INTERP_LUA && cfg.lua.main &&
	    !lua_proc__set_state(p->lua, cfg.lua.main, cfg.lua.owner)) {
		ip->c.lua_states++;
		return true;
	}
	if (!(ev->flags & HS_EVF_USER_STACK) ||
	    (lua_proc__find_state(p->lua, (const uint64_t *)us->regs, HS_UREG__MAX, ev->tid) &&
	     lua_proc__find_state(p->lua, (const uint64_t *)us->data, us->size / 8, ev->tid)))
		return false;
	ip->c.lua_states++;
	/* The BPF side walks it from the next allocation. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.kind = HS_INTERP_LUA;
	cfg.max_frames = ip->o.max_frames;
	lua_proc__bpf(p->lua, &cfg.lua);
	bpf_map__update_elem(ip->o.skel->maps.interp_procs, &pid, sizeof(pid), &cfg, sizeof(cfg),
			     BPF_ANY);
	return true;
}

static int ahead_scan(struct interp *ip, uint64_t pos);

/* py_ahead_fn: @pid's first death of @addr after the record at @pos. */
static const struct hs_interp_code *ahead(void *ctx, pid_t pid, uint64_t addr, uint64_t pos,
					  size_t *len, bool *live)
{
	struct interp *ip = ctx;
	struct iproc *p = find_proc(ip, pid);
	struct death *d;

	ahead_scan(ip, pos);
	*live = p && exec_after(p, pos) == UINT64_MAX;
	d = p ? death_ahead(p, addr, pos) : NULL;
	if (!d)
		return NULL;
	*len = d->len;
	return (const struct hs_interp_code *)d->look;
}

void interp__look(struct interp *ip, pid_t pid, enum interp_when when)
{
	struct iproc *p = get_proc(ip, pid);
	const struct mapping *m = NULL, *cand[2];
	struct mapset *pm = NULL;
	struct libc_tsd tsd;
	char path[PATH_MAX], libc[PATH_MAX], why[512], v[32];
	int err;

	if (!p || (!ip->o.python && !ip->o.lua))
		return;
	/* An exec stop: the old image is gone (BPF forgot it at the exec). */
	if (when == INTERP_AT_EXEC && p->state != IP_OFF) {
		reset(ip, p);
		p->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	}
	if (p->state == IP_ON)
		return;
	p->looked = true;
	if (proc_maps__load_files(pid, &pm))
		return;
	if (ip->o.lua && look_lua(ip, p, pm, when))
		goto out;
	err = -ENOENT;
	for (int i = 0, n = ip->o.python ? python_mappings(pid, pm, cand) : 0; i < n && err == -ENOENT; i++) {
		m = cand[i];
		if (proc_maps__reach(pid, m, path, sizeof(path))) {
			elog("pid %d: %s cannot be reached from here: its Python frames are not read",
			     pid, m->path);
			goto out;
		}
		err = py_image__read(path, &p->img, why, sizeof(why));
	}
	if (err == -ENOENT)
		goto out;	/* not a CPython */
	snprintf(p->exe, sizeof(p->exe), "%s", m->path);
	py_layout__version_str(p->img.version, v, sizeof(v));
	if (err) {
		ip->c.refused++;
		elog("pid %d runs %s: its Python frames are not read: %s%s", pid, m->path, why,
		     err == -EINVAL ? " (please report this with heapsnoop -V and the binary's "
		     "package version)" : "");
		goto out;
	}
	p->bias = load_bias(&p->img, m);
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
		goto out;
	}
	if (err == -ENOENT) {
		ip->c.refused++;
		elog("pid %d runs Python %s with no C library heapsnoop knows: its frames are not "
		     "read", pid, v);
	}
	if (err)
		goto out;
	err = turn_on(ip, p, &tsd, path);
	if (err) {
		ip->c.refused++;
		elog("pid %d runs Python %s (%s): its frames cannot be read: %s", pid, v, p->exe,
		     strerror(-err));
		reset(ip, p);
		p->looked = true;
		goto out;
	}
	elog("pid %d runs Python %s (%s): its frames are read%s", pid, v, p->exe,
	     p->img.debug_offsets ? " (its layout from its _Py_DebugOffsets)" : "");
	say_allocator(p, when == INTERP_RUNNING);
out:
	mapset__free(pm);
}

/* --- the ring ahead: code objects' deaths not handled yet ----------------- */

/* @p's first exec after ring position @pos, UINT64_MAX: none seen. */
static uint64_t exec_after(const struct iproc *p, uint64_t pos)
{
	for (size_t i = 0; i < p->nexecs; i++)
		if (p->execs[i] > pos)
			return p->execs[i];
	return UINT64_MAX;
}

/*
 * @p's first death of @addr after ring position @pos and before the next
 * exec (a later one is another image's code object), or NULL.
 */
static struct death *death_ahead(struct iproc *p, uint64_t addr, uint64_t pos)
{
	struct death *d = p->deaths ? htab__find(p->deaths, key_hash(addr), addr) : NULL;

	while (d && d->pos <= pos)
		d = d->next;
	return d && d->pos < exec_after(p, pos) ? d : NULL;
}

struct scan_ctx {
	struct interp *ip;
	uint64_t from;
};

/* reader__peek's callback: a death record ahead, kept (copied: its room may be reused). */
static void on_ahead(void *arg, const void *data, size_t len, uint64_t pos)
{
	struct scan_ctx *sc = arg;
	const struct hs_event *ev = data;
	struct death *d, **tail;
	struct iproc *p;

	if (pos < sc->from || len < HS_EVENT_HDR_SIZE)
		return;
	p = find_proc(sc->ip, (pid_t)ev->pid);
	if (!p || p->state != IP_ON)
		return;
	if (ev->type == HS_EV_EXEC) {
		uint64_t *v = realloc(p->execs, (p->nexecs + 1) * sizeof(*v));

		/* Without room, a read may name a frame after the new image: never. */
		if (!v) {
			sc->ip->c.lost++;
			return;
		}
		p->execs = v;
		p->execs[p->nexecs++] = pos;
		return;
	}
	if (ev->type != HS_EV_INTERP_CODE || len < HS_EVENT_HDR_SIZE + sizeof(struct hs_interp_code) ||
	    !p->deaths)
		return;
	d = malloc(sizeof(*d) + len - HS_EVENT_HDR_SIZE);
	if (!d)
		return;	/* then the live read is used: the frame may be named "<code gone>" */
	d->pos = pos;
	d->addr = ev->addr;
	d->len = len - HS_EVENT_HDR_SIZE;
	d->next = NULL;
	memcpy(d->look, (const char *)data + HS_EVENT_HDR_SIZE, d->len);
	tail = (struct death **)htab__find(p->deaths, key_hash(d->addr), d->addr);
	if (!tail) {
		if (htab__add(p->deaths, key_hash(d->addr), d->addr, d))
			free(d);
		sc->ip->c.deaths_ahead++;
		return;
	}
	/* Ahead deaths come in the ring's order: appended. */
	for (struct death *e = (struct death *)tail; ; e = e->next)
		if (!e->next) {
			e->next = d;
			break;
		}
	sc->ip->c.deaths_ahead++;
}

/*
 * Look through the ring from the record at @pos (or where the last look
 * stopped, if further) to the producer now.
 */
static int ahead_scan(struct interp *ip, uint64_t pos)
{
	struct scan_ctx sc = { .ip = ip, .from = ip->scanned > pos ? ip->scanned : pos };
	uint64_t to;
	int n;

	if (!ip->o.peek)
		return 0;
	n = ip->o.peek(ip->o.ctx, sc.from, on_ahead, &sc, &to);
	if (to > ip->scanned)
		ip->scanned = to;
	return n;
}

/* The death of code object @addr of @p at @pos is handled: forget the looks up to it. */
static void death_handled(struct iproc *p, uint64_t addr, uint64_t pos)
{
	struct death *d = p->deaths ? htab__delete(p->deaths, key_hash(addr), addr) : NULL, *next;

	while (d && d->pos <= pos) {
		next = d->next;
		free(d);
		d = next;
	}
	if (d && htab__add(p->deaths, key_hash(addr), addr, d))
		for (; d; d = next) {
			next = d->next;
			free(d);
		}
	if (p->cache)
		py_cache__gone(p->cache, addr);
}

/* --- records --------------------------------------------------------------- */

static void keep_frames(struct iproc *p, const struct hs_event *ev, size_t len)
{
	struct pending *pd = htab__find(p->pending, key_hash(ev->tid), ev->tid);
	uint32_t n = ev->nr_frames;

	if (n > HS_INTERP_MAX_FRAMES || HS_EVENT_HDR_SIZE + n * sizeof(pd->f[0]) > len)
		return;
	if (!pd) {
		pd = malloc(sizeof(*pd));
		if (!pd || htab__add(p->pending, key_hash(ev->tid), ev->tid, pd)) {
			free(pd);
			return;
		}
	}
	pd->nr = n;
	pd->flags = ev->flags;
	memcpy(pd->f, (const char *)ev + HS_EVENT_HDR_SIZE, n * sizeof(pd->f[0]));
}

/* -f: a child of a Lua process: the same state, its memory a copy, run by its one thread. */
static void forked_lua(struct interp *ip, struct iproc *pp, struct iproc *c)
{
	const struct lua_vm_info *vm = lua_proc__vm(pp->lua);

	c->lua = lua_proc__new(c->pid, vm, lua_proc__bias(pp->lua));
	c->pending = htab__new(8, NULL, NULL);
	c->looked = true;
	if (!c->lua || !c->pending) {
		reset(ip, c);
		return;
	}
	if (lua_proc__has_state(pp->lua))
		lua_proc__set_state(c->lua, lua_proc__main(pp->lua), (uint32_t)c->pid);
	c->state = IP_ON;
	c->kind = HS_INTERP_LUA;
	c->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
}

/* -f: a child of a process whose frames are read runs the same image (BPF copied its entry). */
static void forked(struct interp *ip, pid_t parent, pid_t child)
{
	struct iproc *pp = find_proc(ip, parent), *c;

	if (!pp || pp->state != IP_ON || !(c = get_proc(ip, child)))
		return;
	reset(ip, c);
	if (pp->kind == HS_INTERP_LUA) {
		forked_lua(ip, pp, c);
		return;
	}
	c->img = pp->img;
	c->bias = pp->bias;
	snprintf(c->exe, sizeof(c->exe), "%s", pp->exe);
	c->cache = py_cache__new(child, &c->img.layout, c->img.code_type + c->bias, ahead, ip);
	c->pending = htab__new(8, NULL, NULL);
	c->deaths = htab__new(8, NULL, NULL);
	c->looked = true;
	if (!c->cache || !c->pending || !c->deaths) {
		reset(ip, c);
		return;
	}
	c->state = IP_ON;
	c->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	ip->nregistered++;
	ip->o.skel->bss->interp_procs_n = ip->nregistered;
}

void interp__record(struct interp *ip, const struct hs_event *ev, size_t len, uint64_t seq)
{
	struct iproc *p;

	if (len < HS_EVENT_HDR_SIZE)
		return;
	p = find_proc(ip, (pid_t)ev->pid);
	switch (ev->type) {
	case HS_EV_INTERP:
		if (p && p->state == IP_ON)
			keep_frames(p, ev, len);
		break;
	case HS_EV_INTERP_CODE:
		ip->c.deaths++;
		if (p)
			death_handled(p, ev->addr, seq - 1);
		break;
	case HS_EV_EXEC:
		if (!p)
			break;
		/* Seen ahead: handled now (a later one stays). */
		while (p->nexecs && p->execs[0] <= seq - 1)
			memmove(p->execs, p->execs + 1, --p->nexecs * sizeof(*p->execs));
		/* The old image's end; one registered at the exec stop came after it. */
		if (seq - 1 >= p->since)
			reset(ip, p);
		break;
	case HS_EV_EXIT:
		if (p) {
			reset(ip, p);
			htab__delete(ip->procs, key_hash((uint32_t)p->pid), (uint32_t)p->pid);
			free(p->execs);
			free(p);
		}
		break;
	case HS_EV_FORK:
		if (ev->size)
			forked(ip, (pid_t)ev->old_addr, (pid_t)ev->pid);
		break;
	default:
		break;
	}
}

/* --- the splice ------------------------------------------------------------ */

static bool is_eval(void *ctx, uint64_t ra)
{
	const struct iproc *p = ctx;

	return ra > p->bias && py_image__in_eval(&p->img, ra - 1 - p->bias);
}

static bool any_eval(struct iproc *p, const uint64_t *native, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (is_eval(p, native[i]))
			return true;
	return false;
}

/*
 * @pd's frames named into ip->iframes, cut into segments (ip->seg_end):
 * 3.11 ends one at each is_entry frame (it included), 3.12 and later at
 * each shim frame (owner 3: dropped, as a 3.13 f_executable that is
 * None). Frames not started yet are dropped (CPython's tracebacks do).
 */
static uint32_t name_frames(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			    const struct pending *pd, uint64_t pos, uint32_t *nseg, bool *cut)
{
	bool by_entry = p->img.layout.fr_entry >= 0;
	uint32_t k = 0, s = 0;

	for (uint32_t i = 0; i < pd->nr; i++) {
		uint64_t w = pd->f[i].pos;
		struct py_frame_name fn;
		struct interp_frame f;

		if (!by_entry && HS_PY_POS_OWNER(w) == PY_OWNER_CSTACK) {
			ip->seg_end[s++] = k;
			continue;
		}
		py_cache__name(p->cache, pd->f[i].code, HS_PY_POS_INDEX(w), pos, &fn);
		if (fn.incomplete) {
			ip->c.incomplete++;
		} else {
			f = (struct interp_frame){ .kind = HS_INTERP_PYTHON, .function = fn.name,
						   .file = fn.file, .line = (uint32_t)fn.line };
			/* Named once per (code object, line): the address kept with it. */
			uint64_t a = fn.memo && *fn.memo ? *fn.memo :
				     ip->o.frame_addr(ip->o.ctx, (pid_t)ev->pid, &f);

			if (!a) {
				*cut = true;	/* the frame table is full: the stack ends here */
				break;
			}
			if (fn.memo)
				*fn.memo = a;
			ip->iframes[k++] = a;
			ip->c.named++;
			ip->c.gone += fn.gone;
		}
		if (by_entry && (w & HS_PY_POS_ENTRY))
			ip->seg_end[s++] = k;
	}
	/* An open segment: the chain was cut (or ends oddly): the next eval frame's. */
	if (!s || ip->seg_end[s - 1] != k || (pd->flags & HS_EVF_TRUNCATED))
		if (k && (!s || ip->seg_end[s - 1] != k))
			ip->seg_end[s++] = k;
	*nseg = s;
	return k;
}

static uint32_t copy_native(const uint64_t *native, uint32_t n, uint64_t *out, uint32_t max)
{
	n = n < max ? n : max;
	memcpy(out, native, n * sizeof(*out));
	return n;
}

/* --- Lua's splice ----------------------------------------------------------- */

struct lua_intern_ctx {
	struct interp *ip;
	pid_t pid;
};

/* lua_intern_fn: a Lua frame's text, its address in the records. */
static uint64_t lua_intern(void *ctx, const struct lua_where *w)
{
	const struct lua_intern_ctx *c = ctx;
	struct interp_frame f = { .kind = HS_INTERP_LUA, .function = w->function, .file = w->file,
				  .line = w->line > 0 ? (uint32_t)w->line : 0 };

	return c->ip->o.frame_addr(c->ip->o.ctx, c->pid, &f);
}

static bool lua_is_eval(void *ctx, uint64_t ra)
{
	return lua_proc__in_exec(ctx, ra);
}

/*
 * @pd's Lua frames named (the innermost at its exact pc, from @grab: the
 * interpreter loop's registers), cut into the loop's runs (luasegs.h),
 * each where its luaV_execute frame was among @native.
 */
static uint32_t lua_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			   const struct pending *pd, const uint64_t *native, uint32_t n,
			   bool native_cut, const struct unwind_grab *grab, uint64_t *out,
			   uint32_t max, uint32_t *flags)
{
	const struct lua_frame *f = (const struct lua_frame *)pd->f;
	struct lua_intern_ctx c = { ip, (pid_t)ev->pid };
	uint32_t evals[HS_LUA_THREADS + 1] = { 0 }, nth = 1, sflags;
	struct splice_in in;
	uint64_t pc = 0;
	bool stale;

	/* The loop's frames of each thread, innermost first: lua_resume's frames part them. */
	for (uint32_t i = 0; i < n; i++) {
		if (lua_proc__in_exec(p->lua, native[i]))
			evals[nth - 1]++;
		else if (lua_proc__in_resume(p->lua, native[i]) && nth <= HS_LUA_THREADS)
			nth++;
	}
	in = (struct splice_in){ .native = native, .nnative = n, .native_cut = native_cut,
				 .iframes = ip->iframes, .seg_end = ip->seg_end,
				 .interp_cut = pd->flags & HS_EVF_TRUNCATED,
				 .is_eval = lua_is_eval, .ctx = p->lua };
	in.nseg = lua_segs(&(struct lua_segs_in){
				   .f = f, .nf = pd->nr,
				   .v51 = lua_proc__vm(p->lua)->vm == LUA_VM_51,
				   .calls = lua_proc__calls, .ctx = p->lua,
				   .evals = native_cut ? NULL : evals, .nthreads = nth },
			   ip->seg_end, HS_INTERP_MAX_FRAMES + 1);
	if (grab && grab->found)
		pc = lua_proc__exact_pc(p->lua, &f[0], grab->regs, CFI_NREGS, grab->known);
	for (uint32_t i = 0; i < pd->nr; i++) {
		ip->iframes[i] = lua_proc__frame_addr(p->lua, f, pd->nr, i, i ? 0 : pc, lua_intern,
						      &c, &stale);
		ip->c.lua_stale += stale;
	}
	ip->c.frames += pd->nr;
	ip->c.named += pd->nr;
	n = splice__frames(&in, out, max, &sflags);
	if (sflags & SPLICE_ORDER) {
		ip->c.order++;
		*flags |= STACK_ORDER;
	}
	if ((sflags & SPLICE_DEPTH) || (pd->flags & HS_EVF_TRUNCATED)) {
		ip->c.truncated++;
		*flags |= STACK_TRUNCATED;
	}
	if (pd->flags & HS_EVF_STACK_FAULT)
		*flags |= STACK_FAULT;
	return n;
}

bool interp__grab(struct interp *ip, pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct iproc *p = find_proc(ip, pid);

	if (!p || p->kind != HS_INTERP_LUA || !p->lua)
		return false;
	lua_proc__exec_range(p->lua, lo, hi);
	return true;
}

uint32_t interp__splice(struct interp *ip, const struct hs_event *ev, uint64_t seq,
			const uint64_t *native, uint32_t n, bool native_cut,
			const struct unwind_grab *grab, uint64_t *out, uint32_t max, uint32_t *flags)
{
	struct iproc *p = find_proc(ip, (pid_t)ev->pid);
	struct pending *pd;
	struct splice_in in;
	uint32_t sflags, got;
	bool cut = false;

	*flags = 0;
	if (!ip->o.python && !ip->o.lua)
		return copy_native(native, n, out, max);
	/* -p after an exec, -f's children: looked at (again) lazily. */
	if (!p || (p->state != IP_ON && (!p->looked || p->state == IP_WAIT_LIBC))) {
		interp__look(ip, (pid_t)ev->pid, INTERP_RUNNING);
		p = find_proc(ip, (pid_t)ev->pid);
	}
	if (!p || p->state != IP_ON)
		return copy_native(native, n, out, max);
	ip->c.allocs++;
	/* Made before an exec stop registered the image there now: not its frames. */
	if ((ev->flags & HS_EVF_INTERP) && seq - 1 < p->since) {
		ip->c.lost++;
		*flags = STACK_FAULT;
		return copy_native(native, n, out, max);
	}
	if (ev->flags & HS_EVF_INTERP_LOST) {
		ip->c.lost++;
		*flags = STACK_FAULT;
		return copy_native(native, n, out, max);
	}
	pd = (ev->flags & HS_EVF_INTERP) ?
	     htab__find(p->pending, key_hash(ev->tid), ev->tid) : NULL;
	if ((ev->flags & HS_EVF_INTERP) && (!pd || pd->nr != ev->interp_frames)) {
		ip->c.mismatch++;
		*flags = STACK_FAULT;
		return copy_native(native, n, out, max);
	}
	if (!pd && p->kind == HS_INTERP_LUA) {
		/* Its state not known yet (-p), or not its thread: no frames, unmarked. */
		if (!lua_state(ip, p, ev))
			ip->c.no_frames++;
		return copy_native(native, n, out, max);
	}
	if (!pd) {
		/* Not a Python thread (yet): no frames; an eval frame then is not placed. */
		ip->c.no_frames++;
		if (any_eval(p, native, n))
			*flags = STACK_ORDER;
		return copy_native(native, n, out, max);
	}
	if (p->kind == HS_INTERP_LUA) {
		if (!lua_state(ip, p, ev)) {
			ip->c.lost++;
			*flags = STACK_FAULT;
			return copy_native(native, n, out, max);
		}
		n = lua_splice(ip, p, ev, pd, native, n, native_cut, grab, out, max, flags);
		pd->nr = 0;
		return n;
	}
	in = (struct splice_in){ .native = native, .nnative = n, .native_cut = native_cut,
				 .iframes = ip->iframes, .seg_end = ip->seg_end,
				 .interp_cut = pd->flags & HS_EVF_TRUNCATED, .is_eval = is_eval,
				 .ctx = p };
	got = name_frames(ip, p, ev, pd, seq - 1, &in.nseg, &cut);
	in.interp_cut = in.interp_cut || cut;
	ip->c.frames += got;
	pd->nr = 0;	/* taken */
	n = splice__frames(&in, out, max, &sflags);
	if (sflags & SPLICE_ORDER) {
		ip->c.order++;
		*flags |= STACK_ORDER;
	}
	if ((sflags & SPLICE_DEPTH) || in.interp_cut) {
		ip->c.truncated++;
		*flags |= STACK_TRUNCATED;
	}
	if (pd->flags & HS_EVF_STACK_FAULT)
		*flags |= STACK_FAULT;
	return n;
}

void interp__stats(const struct interp *ip, FILE *out)
{
	struct py_cache_stats cs = ip->cache, st;
	const struct iproc *p;
	size_t pos = 0;

	while ((p = htab__next(ip->procs, &pos, NULL)))
		if (p->cache) {
			py_cache__stats(p->cache, &st);
			cs.hits += st.hits;
			cs.reads += st.reads;
			cs.from_death += st.from_death;
			cs.gone += st.gone;
			cs.live_lost += st.live_lost;
			cs.entries += st.entries;
		}
	flog(out, "interpreter frames: %" PRIu64 " processes read (%" PRIu64 " refused, said "
	     "above); %" PRIu64 " allocations, %" PRIu64 " frames named (%" PRIu64
	     " of a code object gone), %" PRIu64 " not started dropped; %" PRIu64
	     " allocations without frames (not a Python thread yet), %" PRIu64 " whose frames "
	     "were lost, %" PRIu64 " not matched, %" PRIu64 " not placed exactly (cut=order), %"
	     PRIu64 " cut", ip->c.registered, ip->c.refused, ip->c.allocs, ip->c.named, ip->c.gone,
	     ip->c.incomplete, ip->c.no_frames, ip->c.lost, ip->c.mismatch, ip->c.order,
	     ip->c.truncated);
	if (ip->o.lua)
		flog(out, "Lua: %" PRIu64 " states found, %" PRIu64 " frames whose prototype could "
		     "not be read (named \"?\")", ip->c.lua_states, ip->c.lua_stale);
	flog(out, "code objects: %" PRIu64 " read, %" PRIu64 " named by their last look "
	     "(%" PRIu64 " of them after a read that came too late), %" PRIu64 " gone, %"
	     PRIu64 " cache hits, %zu kept; %" PRIu64 " deaths, %" PRIu64 " seen ahead",
	     cs.reads, cs.from_death + cs.live_lost, cs.live_lost, cs.gone, cs.hits, cs.entries,
	     ip->c.deaths, ip->c.deaths_ahead);
}

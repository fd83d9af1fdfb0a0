// SPDX-License-Identifier: MIT
/*
 * pyops.c - CPython's row of the table of runtimes (ops.h): a -f child's
 * CPython (its parent's image), each allocation's Python frames named
 * (pycache.h: a code object's name and line, read once) and cut into the
 * eval loop's runs, spliced where each eval frame was among the native
 * frames (splice.h); a code object's death; its image forgotten; -v's
 * counts of code objects. Its look: pylook.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python/plpython_int.h"
#include "interp/python/pyproc.h"
#include "msg.h"
#include "stacks.h"

/* -f: a child of a CPython process: the same image, its code objects read anew. */
static void py_fork(struct interp *ip, struct iproc *pp, struct iproc *c)
{
	struct py_proc *py = malloc(sizeof(*py));

	if (!py)
		return;
	interp__set_room(c, &interp_python_ops, py);
	py_of(c)->img = py_of(pp)->img;
	py_of(c)->bias = py_of(pp)->bias;
	snprintf(c->exe, sizeof(c->exe), "%s", pp->exe);
	py_of(c)->cache = py_cache__new(c->pid, &py_of(c)->img.layout, py_of(c)->img.code_type + py_of(c)->bias,
				     interp__ahead, ip);
	c->pending = htab__new(8, NULL, NULL);
	c->deaths = htab__new(8, NULL, NULL);
	c->looked = true;
	if (!py_of(c)->cache || !c->pending || !c->deaths) {
		interp__reset(ip, c);
		return;
	}
	interp__forked_on(ip, c, &interp_python_ops);
}

static bool is_eval(void *ctx, uint64_t ra)
{
	const struct iproc *p = ctx;

	return ra > py_of(p)->bias && py_image__in_eval(&py_of(p)->img, ra - 1 - py_of(p)->bias);
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
 * each shim frame (owner 3, or 3.14's 4: dropped, as a 3.13 f_executable
 * that is None). Frames not started yet are dropped (CPython's tracebacks do).
 */
static uint32_t name_frames(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			    const struct pending *pd, uint64_t pos, uint32_t *nseg, bool *cut)
{
	bool by_entry = py_of(p)->img.layout.fr_entry >= 0;
	uint32_t k = 0, s = 0;

	for (uint32_t i = 0; i < pd->nr; i++) {
		uint64_t w = pd->f[i].pos;
		struct py_frame_name fn;
		struct interp_frame f;

		if (!by_entry && HS_PY_POS_OWNER(w) >= PY_OWNER_CSTACK) {
			ip->seg_end[s++] = k;
			continue;
		}
		py_cache__name(py_of(p)->cache, pd->f[i].code, HS_PY_POS_INDEX(w), pos, &fn);
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

static uint32_t py_splice(struct interp *ip, struct iproc *p, const struct hs_event *ev,
			  uint64_t seq, struct pending *pd, const uint64_t *native, uint32_t n,
			  bool native_cut, const struct unwind_grab *grab, uint64_t *out,
			  uint32_t max, uint32_t *flags)
{
	struct splice_in in;
	uint32_t got;
	bool cut = false;

	(void)grab;
	if (!pd) {
		/* Not a Python thread (yet): no frames; an eval frame then is not placed. */
		ip->c.no_frames++;
		if (any_eval(p, native, n))
			*flags = STACK_ORDER;
		return interp__copy_native(native, n, out, max);
	}
	in = (struct splice_in){ .native = native, .nnative = n, .native_cut = native_cut,
				 .iframes = ip->iframes, .seg_end = ip->seg_end,
				 .interp_cut = pd->flags & HS_EVF_TRUNCATED, .is_eval = is_eval,
				 .ctx = p };
	got = name_frames(ip, p, ev, pd, seq - 1, &in.nseg, &cut);
	in.interp_cut = in.interp_cut || cut;
	ip->c.frames += got;
	pd->nr = 0;	/* taken */
	return interp__splice_out(ip, &in, pd, in.interp_cut, out, max, flags);
}


static void add_cache_stats(struct py_cache_stats *to, const struct py_cache *c)
{
	struct py_cache_stats st;

	py_cache__stats(c, &st);
	to->hits += st.hits;
	to->reads += st.reads;
	to->from_death += st.from_death;
	to->gone += st.gone;
	to->live_lost += st.live_lost;
}

/* Its code objects' names forgotten, their counts kept in ip->py_cache. */
static void py_forget(struct interp *ip, struct iproc *p)
{
	if (!py_of(p))
		return;
	if (py_of(p)->cache && (ip->py_cache || (ip->py_cache = calloc(1, sizeof(*ip->py_cache)))))
		add_cache_stats(ip->py_cache, py_of(p)->cache);
	py_cache__free(py_of(p)->cache);
	free(py_of(p));
}

static void py_code_gone(struct iproc *p, uint64_t addr)
{
	if (py_of(p) && py_of(p)->cache)
		py_cache__gone(py_of(p)->cache, addr);
}

static void py_stats(const struct interp *ip, FILE *out)
{
	struct py_cache_stats cs = { 0 }, st;
	const struct iproc *p;
	size_t pos = 0;

	if (ip->py_cache)
		cs = *ip->py_cache;
	while ((p = htab__next(ip->procs, &pos, NULL)))
		if (py_of(p) && py_of(p)->cache) {
			py_cache__stats(py_of(p)->cache, &st);
			cs.hits += st.hits;
			cs.reads += st.reads;
			cs.from_death += st.from_death;
			cs.gone += st.gone;
			cs.live_lost += st.live_lost;
			cs.entries += st.entries;
		}
	flog(out, "code objects: %" PRIu64 " read, %" PRIu64 " named by their last look "
	     "(%" PRIu64 " of them after a read that came too late), %" PRIu64 " gone, %"
	     PRIu64 " cache hits, %zu kept; %" PRIu64 " deaths, %" PRIu64 " seen ahead",
	     cs.reads, cs.from_death + cs.live_lost, cs.live_lost, cs.gone, cs.hits, cs.entries,
	     ip->c.deaths, ip->c.deaths_ahead);
}

/*
 * The command's environment. pymalloc's fast path is inlined at every
 * call site of Debian's python3.x (LTO), and its objects come from its
 * own arenas: neither a probe nor the collector sees them. Under
 * PYTHONMALLOC=malloc each is a malloc'ed block. A free-threaded build
 * (3.13t, 3.14t) refuses it (mimalloc only): left unset when the command
 * is one. Set PYTHONMALLOC, or --interp none, leaves it alone.
 */
static int py_command_env(const struct interp_opts *o, const char *cmd)
{
	if (!o->python || getenv("PYTHONMALLOC"))
		return 0;
	if (cmd && py_command__free_threaded(cmd)) {
		elog("%s is a free-threaded CPython: it refuses PYTHONMALLOC=malloc, left unset", cmd);
		return 0;
	}
	if (setenv("PYTHONMALLOC", "malloc", 1))
		return -errno;
	if (o->verbose)
		elog("PYTHONMALLOC=malloc for the command: a Python it runs allocates each object "
		     "with malloc (--interp none, or PYTHONMALLOC set, leaves it alone)");
	return 0;
}

const struct interp_ops interp_python_ops = {
	.name = "python",
	.look = interp__look_python,
	.fork = py_fork,
	.splice = py_splice,
	.forget = py_forget,
	.code_gone = py_code_gone,
	.stats = py_stats,
	.command_env = py_command_env,
	.pl_title = "Python",
	.pl_loop = "eval loop",
	.pl_is = plpy__is,
	.pl_new = plpy__new_state,
	.pl_free = plpy__free_state,
	.pl_anchor = plpy__anchor,
	.pl_read = plpy__read,
	.pl_copy = plpy__copy,
	.pl_record = plpy__record,
	.pl_resolve = plpy__resolve,
	.pl_said = plpy__said,
	.pl_finish = plpy__counts_said,
};

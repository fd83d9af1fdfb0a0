// SPDX-License-Identifier: MIT
/*
 * plpython.c - heapsnoop --preload's Python frames (see plpython.h): the
 * table's stack nodes scanned in order as they appear, the collector's
 * code object records taken (plpycode.c), each new whole stack's Python
 * words named (each frame, a code object at an instruction, once an
 * image), spliced at the eval loop's frames (the tracer's splice.c, its
 * rule), and
 * written as synthetic addresses and `frame` records through the dump's
 * hooks (livedump.h, lt_out's xlate and names). A Lua's image is one of
 * these too, its stacks named and spliced by pllua.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "frametab.h"
#include "htab.h"
#include "interp/python/pycode.h"
#include "interp/python/pyfind.h"
#include "interp/splice.h"
#include "msg.h"
#include "plpython.h"
#include "plpython_int.h"
#include "records.h"

#define GONE "<code gone>"

struct plpy *plpy__new(bool verbose)
{
	struct plpy *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->verbose = verbose;
	py->ft = frametab__new();
	if (!py->ft) {
		free(py);
		return NULL;
	}
	return py;
}

void plpy__free(struct plpy *py)
{
	if (!py)
		return;
	while (py->images)
		plpy_image__free(py->images);
	frametab__free(py->ft);
	free(py);
}

/* --- a stack named and spliced -------------------------------------------- */

static bool is_eval(void *ctx, uint64_t ra)
{
	const struct plpy_image *pi = ctx;

	return ra > pi->bias && py_image__in_eval(&pi->img, ra - 1 - pi->bias);
}

/*
 * A Python frame as named once: its code object (address, fingerprint)
 * at an instruction, its synthetic address; skip: not started yet (left
 * out); gone: its code object neither recorded nor readable. Each is
 * named once for the image (the outer frames of a program's stacks are
 * the same in thousands of them): the code object's line table decoded
 * and the frame interned (frametab's hash of its strings) once.
 */
struct named {
	uint64_t code;
	uint32_t fp;
	int32_t index;
	uint64_t addr;
	bool skip, gone;
};

static bool named_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct named *a = (const struct named *)stored, *b = (const struct named *)probe;

	(void)ctx;
	return a->code == b->code && a->fp == b->fp && a->index == b->index;
}

/*
 * Code object @code (fingerprint @fp) at instruction @index, named: the
 * image's kept one, else named into *@tmp and kept; NULL when the frame
 * table is full.
 */
static const struct named *named_of(struct plpy_image *pi, uint64_t code, uint32_t fp,
				    int32_t index, struct named *tmp)
{
	struct named key = { .code = code, .fp = fp, .index = index }, *nm;
	uint64_t hash = htab_hash2(code, (uint64_t)fp << 32 | (uint32_t)index);
	const char *name = GONE, *file = NULL;
	struct code *c;
	int line = 0;

	nm = pi->named_frames ? htab__find(pi->named_frames, hash, (uintptr_t)&key) : NULL;
	if (nm)
		return nm;
	*tmp = key;
	c = plpy_code__of(pi, code, fp);
	if (c && c->ok) {
		bool known = index != LT_PY_INDEX_BAD;	/* else too far to say: line 0 */

		if (known && (index < 0 || (c->c.firsttraceable >= 0 && index < c->c.firsttraceable))) {
			tmp->skip = true;	/* not started yet */
		} else {
			name = c->c.name;
			file = c->c.file;
			line = known ? py_code__line(&c->c, index) : 0;
			line = line > 0 ? line : 0;
		}
	} else {
		tmp->gone = true;
	}
	if (!tmp->skip && frametab__intern(pi->py->ft, (uint32_t)pi->pid, "python", name, file,
					   (uint32_t)line, &tmp->addr))
		return NULL;
	nm = pi->named_frames ? malloc(sizeof(*nm)) : NULL;
	if (nm) {
		*nm = *tmp;
		if (htab__add(pi->named_frames, hash, (uintptr_t)nm, nm)) {
			free(nm);
			nm = NULL;
		}
	}
	return nm ? nm : tmp;
}

/* Every named frame of @pi forgotten (its binary read again: names made anew). */
static void named_free(struct plpy_image *pi)
{
	size_t pos = 0;
	void *v;

	while (pi->named_frames && (v = htab__next(pi->named_frames, &pos, NULL)))
		free(v);
	htab__free(pi->named_frames);
	pi->named_frames = NULL;
}

/*
 * The Python pairs @f[@n] named into py->iframes, cut into segments
 * (py->seg_end: 3.11's is_entry frame ends one, as the tracer's
 * interp.c); a frame not started yet dropped (CPython's tracebacks do).
 * *@more: the chain went on past them; *@bad: the words are not pairs.
 */
static uint32_t name_pairs(struct plpy_image *pi, const uint64_t *f, uint32_t n, uint32_t *nseg,
			   bool *more, bool *bad)
{
	struct plpy *py = pi->py;
	uint32_t k = 0, s = 0;

	*bad = n % 2;
	for (uint32_t i = 0; i + 1 < n; i += 2) {
		uint64_t w = f[i], pos = f[i + 1];
		const struct named *nm;
		struct named tmp;

		if (!(w & LT_PY_WORD) || (w & LT_PY_POS) || (pos & (LT_PY_WORD | LT_PY_POS)) !=
		    (LT_PY_WORD | LT_PY_POS)) {
			*bad = true;
			break;
		}
		nm = named_of(pi, w & LT_PY_ADDR, lt_py_fp(pos), lt_py_index(pos), &tmp);
		if (!nm) {
			*more = true;	/* the frame table is full: the stack ends here */
			break;
		}
		pi->gone += nm->gone;
		if (!nm->skip) {
			py->iframes[k++] = nm->addr;
			py->frames++;
		}
		if (w & LT_PY_ENTRY)
			py->seg_end[s++] = k;
		if (w & LT_PY_MORE)
			*more = true;
	}
	/* An open segment: the chain was cut (or ends oddly): the next eval frame's. */
	if (k && (!s || py->seg_end[s - 1] != k))
		py->seg_end[s++] = k;
	*nseg = s;
	return k;
}

/* Stack @id (@f[@depth], cut bits @cut) as written; NULL: no memory. */
struct xstack *plpy__resolve(struct plpy_image *pi, uint32_t id, const uint64_t *f,
			      uint32_t depth, uint32_t cut)
{
	struct plpy *py = pi->py;
	uint32_t nn = 0, n = 0, sflags = 0;
	struct splice_in in = { 0 };
	bool more = false, bad = false, evals = false;

	while (nn < depth && !(f[nn] & LT_PY_WORD))
		nn++;
	for (uint32_t i = 0; pi->named && i < nn && !evals; i++)
		evals = is_eval(pi, f[i]);
	if (nn == depth && !evals) {
		n = AS_IS;
	} else if (!pi->named) {
		/* Its Python frames cannot be named: left out, the stack said not in order. */
		memcpy(py->out, f, nn * sizeof(*f));
		n = nn;
		cut |= REC_CUT_ORDER;
	} else {
		in = (struct splice_in){ .native = f, .nnative = nn, .iframes = py->iframes,
					 .seg_end = py->seg_end, .is_eval = is_eval, .ctx = pi,
					 .native_cut = cut & (REC_CUT_DEPTH | REC_CUT_UNREADABLE) };
		name_pairs(pi, f + nn, depth - nn, &in.nseg, &more, &bad);
		in.interp_cut = more;
		n = splice__frames(&in, py->out, LT_MAX_DEPTH, &sflags);
		cut = plpy__splice_cut(py, cut, sflags, evals && !in.nseg, more, bad);
		py->stacks++;
	}
	return plpy__keep(pi, id, n, cut);
}

uint32_t plpy__splice_cut(struct plpy *py, uint32_t cut, uint32_t sflags, bool unplaced,
			  bool more, bool bad)
{
	if ((sflags & SPLICE_ORDER) || unplaced)
		cut |= REC_CUT_ORDER;
	if ((sflags & SPLICE_DEPTH) || more)
		cut |= REC_CUT_DEPTH;
	if (bad)
		cut |= REC_CUT_UNREADABLE;
	py->order += !!(cut & REC_CUT_ORDER);
	return cut;
}

struct xstack *plpy__keep(struct plpy_image *pi, uint32_t id, uint32_t n, uint32_t cut)
{
	struct xstack *x = malloc(sizeof(*x) + (n == AS_IS ? 0 : n) * sizeof(uint64_t));

	if (!x)
		return NULL;
	x->depth = n;
	x->cut = cut;
	if (n != AS_IS)
		memcpy(x->frames, pi->py->out, n * sizeof(uint64_t));
	if (htab__add(pi->stacks, id, id, x)) {
		free(x);
		return NULL;
	}
	return x;
}

/*
 * Stack @id of @pi as written, named now if it was not yet: its words
 * @f[@depth] and cut bits @cut if the caller has them (@f NULL: rebuilt
 * from the table).
 */
static struct xstack *stack_of(struct plpy_image *pi, uint32_t id, const uint64_t *f,
			       uint32_t depth, uint32_t cut)
{
	struct xstack *x = htab__find(pi->stacks, id, id);

	if (x)
		return x;
	if (!f) {
		if (lt_stack__words(pi->view, id, pi->py->f, &depth, &cut))
			return NULL;
	} else if (depth > LT_MAX_DEPTH) {
		return NULL;
	} else if (f != pi->py->f) {
		/* The writer's memory may change under us: its frames copied first. */
		memcpy(pi->py->f, f, depth * sizeof(*f));
	}
	return pi->ops->pl_resolve(pi, id, pi->py->f, depth, cut);
}

/* --- the dump's hooks ------------------------------------------------------ */

static struct plpy_image *image_of(struct plpy *py, int pid)
{
	for (struct plpy_image *pi = py->images; pi; pi = pi->next)
		if (pi->pid == pid)
			return pi;
	return NULL;
}

static const uint64_t *xlate(void *arg, const struct lt_snap *s, uint32_t id,
			     const uint64_t *words, uint32_t *depth, uint32_t *cut)
{
	struct plpy_image *pi = image_of(arg, s->pid);
	struct xstack *x;

	if (!pi || !id)
		return NULL;
	x = stack_of(pi, id, words, *depth, *cut);
	if (!x || x->depth == AS_IS)
		return NULL;
	*depth = x->depth;
	*cut = x->cut;
	return x->frames;
}

/* The `frame` records @s's stacks need, after its `map` lines. */
static void names(void *arg, struct lt_out *o, const struct lt_snap *s)
{
	struct plpy *py = arg;
	struct plpy_image *pi = image_of(py, s->pid);
	size_t len = 0;
	char *buf = NULL;
	bool any = false;
	FILE *f;

	if (!pi)
		return;
	if (pi->pending && !pi->said) {
		pi->said = true;
		elog("pid %d: its %s frames are not named in this dump (%s): its binary is read "
		     "again when it ends", (int)pi->pid, pi->lua ? "Lua" : "Python", pi->why);
	}
	frametab__dump_begin(py->ft);
	for (uint64_t i = 0; i < s->n; i++) {
		const struct lt_item *it = &s->items[i];
		struct xstack *x = it->stack ? stack_of(pi, it->stack, NULL, 0, 0) : NULL;

		if (x && x->depth != AS_IS) {
			frametab__need(py->ft, (uint32_t)s->pid, x->frames, x->depth);
			any = true;
		}
	}
	if (!any || !(f = open_memstream(&buf, &len)))
		return;
	frametab__write(py->ft, (uint32_t)s->pid, f);
	if (!fclose(f))
		lt_out__put(o, buf, len);
	free(buf);
}

void plpy__hook(struct plpy *py, struct lt_out *o)
{
	o->xlate = xlate;
	o->names = names;
	o->xarg = py;
}

/* --- images --------------------------------------------------------------- */

/* Has @pidfd's process ended (a zombie, or reaped)? Its table then holds all it will. */
static bool ended(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP));
}

bool plpy__is(uint32_t py_version, uint32_t lua_vm)
{
	(void)lua_vm;
	return py_version != 0;
}

uint64_t plpy__anchor(const struct lt_header *h)
{
	return h->py_eval;
}

int plpy__read(struct plpy_image *pi, const char *path, uint64_t start, uint64_t off,
	       uint64_t eval, char *why, size_t cap)
{
	int err = py_image__read(path, &pi->img, why, cap);

	if (err)
		return err;
	pi->bias = pi->img.pie ? start - off - pi->img.vaddr_off : 0;
	pi->code_type = pi->img.code_type + pi->bias;
	if (!py_image__in_eval(&pi->img, eval - pi->bias)) {
		snprintf(why, cap, "its eval loop is not where its collector found it");
		return -EINVAL;
	}
	return 0;
}

int plpy__copy(struct plpy_image *pi, const struct plpy_image *parent)
{
	pi->img = parent->img;
	pi->bias = parent->bias;
	pi->code_type = parent->code_type;
	return 0;
}

/* @pi's binary found and read: 0 or -errno (@why says). */
static int settle(struct plpy_image *pi, char *why, size_t cap)
{
	const struct lt_header *h = pi->h;
	char v[32];
	int err;

	*why = '\0';
	err = pi->lua ? pllua__new(pi) : 0;
	if (!err)
		err = plpy_image__find_binary(pi, h->parent, pi->ops->pl_anchor(h), why, cap);
	if (!err && !pi->lua && pi->img.version != pi->version) {
		snprintf(why, cap, "its collector says %s", py_layout__version_str(pi->version, v,
			 sizeof(v)));
		err = -EINVAL;
	}
	return err;
}

/*
 * @pi settled for good (@err, @why): named, or said and counted. The
 * stacks a dump named while it was pending are named anew.
 */
static void settled(struct plpy_image *pi, int err, const char *why)
{
	struct plpy *py = pi->py;
	struct htab *fresh;
	size_t pos = 0;
	void *x;

	pi->pending = false;
	pi->named = !err;
	named_free(pi);
	pi->named_frames = htab__new(256, named_equal, NULL);
	if (htab__next(pi->stacks, &pos, NULL) && (fresh = htab__new(256, NULL, NULL))) {
		for (pos = 0; (x = htab__next(pi->stacks, &pos, NULL));)
			free(x);
		htab__free(pi->stacks);
		pi->stacks = fresh;
	}
	if (err) {
		py->unnamed++;
		elog("pid %d: its %s frames are not named (%s%s%s): its stacks stand under "
		     "the %s's C frames, cut=order", (int)pi->pid, pi->lua ? "Lua" : "Python",
		     strerror(-err), *why ? ": " : "", why,
		     pi->lua ? "interpreter loop" : "eval loop");
	} else if (py->verbose) {
		pi->ops->pl_said(pi);
	}
}

void plpy__said(const struct plpy_image *pi)
{
	char v[32];

	elog("pid %d: Python %s, its frames read by its collector and named here",
	     (int)pi->pid, py_layout__version_str(pi->version, v, sizeof(v)));
}

/*
 * Its binary found once more: a process that died while it was read (its
 * /proc/PID/map_files gone between two opens) is found by its table now.
 */
static void settle_again(struct plpy_image *pi)
{
	char why[512];

	settled(pi, settle(pi, why, sizeof(why)), why);
}

struct plpy_image *plpy_image__new(struct plpy *py, pid_t pid, int pidfd,
				   const struct lt_view *view)
{
	const struct lt_header *h = view->h;
	uint32_t version = __atomic_load_n(&h->py_version, __ATOMIC_ACQUIRE);
	uint32_t lua = version ? 0 : __atomic_load_n(&h->lua_vm, __ATOMIC_ACQUIRE);
	const struct interp_ops *ops = NULL;
	struct plpy_image *pi;
	char why[512];
	int err;

	/* The runtime whose frames its collector writes: its row reads them. */
	for (const struct interp_ops *const *r = interp_rooms; *r && !ops; r++)
		if ((*r)->pl_is && (*r)->pl_is(version, lua))
			ops = *r;
	if (!ops)
		return NULL;
	pi = calloc(1, sizeof(*pi));
	if (!pi || !(pi->codes = htab__new(256, plpy_code__equal, NULL)) ||
	    !(pi->stacks = htab__new(256, NULL, NULL)) || (lua && pllua__new(pi))) {
		elog("out of memory: pid %d's interpreter frames are not named", (int)pid);
		py->unnamed++;
		if (pi) {
			pi->py = py;
			plpy_image__free(pi);
		}
		return NULL;
	}
	pi->ops = ops;
	pi->py = py;
	pi->pid = pid;
	pi->pidfd = pidfd;
	pi->view = view;
	pi->version = version;
	pi->h = h;
	pi->scanned = 8;	/* id 0 is no stack */
	pi->next = py->images;
	py->images = pi;
	*(lua ? &py->lua_images : &py->images_n) += 1;
	err = settle(pi, why, sizeof(why));
	if (err && !ended(pidfd)) {
		/* Running, or dying (its mappings gone first): tried again when it has ended. */
		pi->pending = true;
		snprintf(pi->why, sizeof(pi->why), "%s%s%.120s", strerror(-err), *why ? ": " : "",
			 why);
		return pi;
	}
	settled(pi, err, why);	/* ended: its table was read too (plbinary.c) */
	return pi;
}

void plpy_image__scan(struct plpy_image *pi)
{
	struct lt_node n;
	uint64_t *f;
	int r;

	if (pi && pi->pending && ended(pi->pidfd))
		settle_again(pi);
	if (!pi || !pi->named || pi->scan_bad)
		return;
	f = pi->py->f;
	while ((r = lt_stack__next(pi->view, pi->scanned, &n)) == 1) {
		uint32_t depth, cut;

		if (n.commit == LT_STK_PAD || (!n.parent && !(n.commit & LT_STK_LEAF))) {
			/* A record: its words copied (the writer's memory), then read. */
			memcpy(f, n.words, n.n * sizeof(uint64_t));
			if (n.n >= LT_LUA_NAMEREC_WORDS && f[0] == LT_LUA_NAMEREC)
				pllua__record(pi, f, n.n);
			else if (n.n >= LT_PY_CODEREC_WORDS && f[0] == LT_PY_CODEREC)
				plpy_code__record(pi, f, n.n);
		} else if ((n.commit & LT_STK_LEAF) &&
			   !lt_stack__words(pi->view, n.id, f, &depth, &cut)) {
			/* A new stack (its outer nodes are others' too): named while the process lives. */
			for (uint32_t i = depth; i-- > 0;)
				if (f[i] & LT_PY_WORD) {
					stack_of(pi, n.id, f, depth, cut);
					break;
				}
		}
		pi->scanned = n.next;
	}
	if (r < 0)
		pi->scan_bad = true;	/* a table that lies: dumps name what they can */
}

void plpy_image__ended(struct plpy_image *pi)
{
	if (!pi)
		return;
	if (pi->pending)
		settle_again(pi);
	pi->dead = true;
}

void plpy_image__free(struct plpy_image *pi)
{
	struct plpy_image **pp;
	size_t pos = 0;
	void *v;

	if (!pi)
		return;
	for (pp = &pi->py->images; *pp; pp = &(*pp)->next)
		if (*pp == pi) {
			*pp = pi->next;
			frametab__forget(pi->py->ft, (uint32_t)pi->pid);
			break;
		}
	*(pi->lua ? &pi->py->lua_gone : &pi->py->gone) += pi->gone;
	pllua__free(pi);
	plpy_code__free_all(pi);
	named_free(pi);
	if (pi->stacks)
		while ((v = htab__next(pi->stacks, &pos, NULL)))
			free(v);
	htab__free(pi->codes);
	htab__free(pi->stacks);
	free(pi);
}

struct frametab *plpy__frames(struct plpy *py)
{
	return py ? py->ft : NULL;
}

void plpy__finish(struct plpy *py)
{
	uint64_t gone = py->gone, lgone = py->lua_gone;

	for (struct plpy_image *pi = py->images; pi; pi = pi->next)
		*(pi->lua ? &lgone : &gone) += pi->gone;
	if (py->lua_images && py->verbose)
		elog("Lua frames: %" PRIu64 " processes, %" PRIu64 " stacks, %" PRIu64 " names "
		     "recorded by the collector", py->lua_images, py->lua_stacks, py->lua_records);
	if (py->unnamed)
		elog("%" PRIu64 " processes' Lua or Python frames are not named (each said above): "
		     "their stacks stand under the interpreter loop's C frames, cut=order",
		     py->unnamed);
	if (lgone)
		elog("%" PRIu64 " Lua frames are named \"?\": the collector recorded no name for "
		     "them (a stack cut, a table full: docs/COLLECTOR.md, \"Lua frames\")", lgone);
	if (!py->images_n)
		return;
	if (py->verbose)
		elog("Python frames: %" PRIu64 " processes, %" PRIu64 " stacks, %" PRIu64
		     " frames named (%" PRIu64 " code objects recorded by the collector, %" PRIu64
		     " read), %" PRIu64 " stacks cut=order", py->images_n, py->stacks, py->frames,
		     py->records, py->reads, py->order);
	if (gone)
		elog("%" PRIu64 " Python frames are named " GONE ": their code objects were "
		     "neither recorded by the collector nor readable (docs/COLLECTOR.md, \"Python "
		     "frames\")", gone);
}

// SPDX-License-Identifier: MIT
/*
 * plpython.c - CPython's side of heapsnoop --preload's reader (its row's
 * pl_*, interp/ops.h, on the images of interp/plread.c): its state of an
 * image, its binary read (pyfind.c), the collector's code object records
 * taken (plpycode.c), each stack's Python words named (each frame, a code
 * object at an instruction, once an image) and spliced at the eval
 * loop's frames (the tracer's splice.c, its rule), its closing counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"
#include "htab.h"
#include "interp/python/plpython_int.h"
#include "interp/python/pycode.h"
#include "interp/python/pyfind.h"
#include "interp/splice.h"
#include "msg.h"
#include "records.h"

#define GONE "<code gone>"

/* --- a stack named and spliced -------------------------------------------- */

static bool is_eval(void *ctx, uint64_t ra)
{
	const struct plpy_py *p = plpy_py_of(ctx);

	return ra > p->bias && py_image__in_eval(&p->img, ra - 1 - p->bias);
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
static const struct named *named_of(struct plread_image *pi, uint64_t code, uint32_t fp,
				    int32_t index, struct named *tmp)
{
	struct htab *named_frames = plpy_py_of(pi)->named_frames;
	struct named key = { .code = code, .fp = fp, .index = index }, *nm;
	uint64_t hash = htab_hash2(code, (uint64_t)fp << 32 | (uint32_t)index);
	const char *name = GONE, *file = NULL;
	struct code *c;
	int line = 0;

	nm = named_frames ? htab__find(named_frames, hash, (uintptr_t)&key) : NULL;
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
	nm = named_frames ? malloc(sizeof(*nm)) : NULL;
	if (nm) {
		*nm = *tmp;
		if (htab__add(named_frames, hash, (uintptr_t)nm, nm)) {
			free(nm);
			nm = NULL;
		}
	}
	return nm ? nm : tmp;
}

/* Every named frame of @p forgotten (its binary read again: names made anew). */
static void named_free(struct plpy_py *p)
{
	size_t pos = 0;
	void *v;

	while (p->named_frames && (v = htab__next(p->named_frames, &pos, NULL)))
		free(v);
	htab__free(p->named_frames);
	p->named_frames = NULL;
}

/*
 * The Python pairs @f[@n] named into py->iframes, cut into segments
 * (py->seg_end: 3.11's is_entry frame ends one, as the tracer's
 * interp.c); a frame not started yet dropped (CPython's tracebacks do).
 * *@more: the chain went on past them; *@bad: the words are not pairs.
 */
static uint32_t name_pairs(struct plread_image *pi, const uint64_t *f, uint32_t n, uint32_t *nseg,
			   bool *more, bool *bad)
{
	struct plread *py = pi->py;
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
			pi->c->frames++;
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
struct xstack *plpy__resolve(struct plread_image *pi, uint32_t id, const uint64_t *f,
			      uint32_t depth, uint32_t cut)
{
	struct plread *py = pi->py;
	uint32_t nn = 0, n = 0, sflags = 0;
	struct splice_in in = { 0 };
	bool more = false, bad = false, evals = false;

	while (nn < depth && !(f[nn] & LT_PY_WORD))
		nn++;
	for (uint32_t i = 0; pi->named && i < nn && !evals; i++)
		evals = is_eval(pi, f[i]);
	if (!plread__unspliced(pi, f, nn, depth, evals, &n, &cut)) {
		in = (struct splice_in){ .native = f, .nnative = nn, .iframes = py->iframes,
					 .seg_end = py->seg_end, .is_eval = is_eval, .ctx = pi,
					 .native_cut = cut & (REC_CUT_DEPTH | REC_CUT_UNREADABLE) };
		name_pairs(pi, f + nn, depth - nn, &in.nseg, &more, &bad);
		in.interp_cut = more;
		n = splice__frames(&in, py->out, LT_MAX_DEPTH, &sflags);
		cut = plread__splice_cut(pi, cut, sflags, evals && !in.nseg, more, bad);
		pi->c->stacks++;
	}
	return plread__keep(pi, id, n, cut);
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

int plpy__new_state(struct plread_image *pi)
{
	struct plpy_py *p = pi->room;

	/* Made once; its code objects (the collector's records) kept, its names made anew. */
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		pi->room = p;
		p->version = __atomic_load_n(&pi->h->py_version, __ATOMIC_ACQUIRE);
		p->codes = htab__new(256, plpy_code__equal, NULL);
		if (!p->codes)
			return -ENOMEM;
	}
	named_free(p);
	p->named_frames = htab__new(256, named_equal, NULL);
	return p->named_frames ? 0 : -ENOMEM;
}

void plpy__free_state(struct plread_image *pi)
{
	struct plpy_py *p = pi->room;

	if (!p)
		return;
	plpy_code__free_all(pi);
	named_free(p);
	htab__free(p->codes);
	free(p);
	pi->room = NULL;
}

int plpy__read(struct plread_image *pi, const char *path, uint64_t start, uint64_t off,
	       uint64_t eval, char *why, size_t cap)
{
	struct plpy_py *p = plpy_py_of(pi);
	int err = py_image__read(path, &p->img, why, cap);
	char v[32];

	if (err)
		return err;
	p->bias = p->img.pie ? start - off - p->img.vaddr_off : 0;
	p->code_type = p->img.code_type + p->bias;
	if (!py_image__in_eval(&p->img, eval - p->bias)) {
		snprintf(why, cap, "its eval loop is not where its collector found it");
		return -EINVAL;
	}
	if (p->img.version != p->version) {
		snprintf(why, cap, "its collector says %s",
			 py_layout__version_str(p->version, v, sizeof(v)));
		return -EINVAL;
	}
	return 0;
}

int plpy__copy(struct plread_image *pi, const struct plread_image *parent)
{
	struct plpy_py *p = plpy_py_of(pi);
	const struct plpy_py *pp = plpy_py_of(parent);

	p->img = pp->img;
	p->bias = pp->bias;
	p->code_type = pp->code_type;
	return 0;
}

bool plpy__record(struct plread_image *pi, const uint64_t *w, uint32_t n)
{
	if (n < LT_PY_CODEREC_WORDS || w[0] != LT_PY_CODEREC)
		return false;
	plpy_code__record(pi, w, n);
	return true;
}


void plpy__said(const struct plread_image *pi)
{
	char v[32];

	elog("pid %d: Python %s, its frames read by its collector and named here",
	     (int)pi->pid, py_layout__version_str(plpy_py_of(pi)->version, v, sizeof(v)));
}

void plpy__counts_said(const struct pl_counts *c, bool verbose)
{
	if (!c->images)
		return;
	if (verbose)
		elog("Python frames: %" PRIu64 " processes, %" PRIu64 " stacks, %" PRIu64
		     " frames named (%" PRIu64 " code objects recorded by the collector, %" PRIu64
		     " read), %" PRIu64 " stacks cut=order", c->images, c->stacks, c->frames,
		     c->records, c->reads, c->order);
	if (c->gone)
		elog("%" PRIu64 " Python frames are named " GONE ": their code objects were "
		     "neither recorded by the collector nor readable (docs/COLLECTOR.md, \"Python "
		     "frames\")", c->gone);
}

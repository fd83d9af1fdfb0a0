// SPDX-License-Identifier: MIT
/*
 * plread.c - heapsnoop --preload's reader of interpreter frames (see
 * plread.h): each process image whose collector walks an interpreter,
 * its row found by its table's header (ops.h's pl_is), its binary read
 * through its row (plbinary.c finds it), the table's stack nodes scanned
 * in order as they appear, its collector's records handed to its row,
 * each new whole stack named and spliced by its row (CPython's:
 * python/plpython.c; PUC Lua's: lua/pllua.c) and kept, and written as
 * synthetic addresses and `frame` records through the dump's hooks
 * (livedump.h, lt_out's xlate and names). Nothing here is one runtime's.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"
#include "htab.h"
#include "interp/plread.h"
#include "interp/plread_int.h"
#include "interp/splice.h"
#include "msg.h"
#include "records.h"

struct plread *plread__new(bool verbose)
{
	struct plread *py = calloc(1, sizeof(*py));

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

void plread__free(struct plread *py)
{
	if (!py)
		return;
	while (py->images)
		plread_image__free(py->images);
	frametab__free(py->ft);
	free(py);
}


uint32_t plread__splice_cut(struct plread_image *pi, uint32_t cut, uint32_t sflags,
			    bool unplaced, bool more, bool bad)
{
	if ((sflags & SPLICE_ORDER) || unplaced)
		cut |= REC_CUT_ORDER;
	if ((sflags & SPLICE_DEPTH) || more)
		cut |= REC_CUT_DEPTH;
	if (bad)
		cut |= REC_CUT_UNREADABLE;
	pi->c->order += !!(cut & REC_CUT_ORDER);
	return cut;
}

bool plread__unspliced(struct plread_image *pi, const uint64_t *f, uint32_t nn, uint32_t depth,
		       bool evals, uint32_t *n, uint32_t *cut)
{
	if (nn == depth && !evals) {
		*n = AS_IS;
		return true;
	}
	if (pi->named)
		return false;
	/* Its interpreter's frames cannot be named: left out, the stack said not in order. */
	memcpy(pi->py->out, f, nn * sizeof(*f));
	*n = nn;
	*cut |= REC_CUT_ORDER;
	return true;
}

struct xstack *plread__keep(struct plread_image *pi, uint32_t id, uint32_t n, uint32_t cut)
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
static struct xstack *stack_of(struct plread_image *pi, uint32_t id, const uint64_t *f,
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

static struct plread_image *image_of(struct plread *py, int pid)
{
	for (struct plread_image *pi = py->images; pi; pi = pi->next)
		if (pi->pid == pid)
			return pi;
	return NULL;
}

static const uint64_t *xlate(void *arg, const struct lt_snap *s, uint32_t id,
			     const uint64_t *words, uint32_t *depth, uint32_t *cut)
{
	struct plread_image *pi = image_of(arg, s->pid);
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
	struct plread *py = arg;
	struct plread_image *pi = image_of(py, s->pid);
	size_t len = 0;
	char *buf = NULL;
	bool any = false;
	FILE *f;

	if (!pi)
		return;
	if (pi->pending && !pi->said) {
		pi->said = true;
		elog("pid %d: its %s frames are not named in this dump (%s): its binary is read "
		     "again when it ends", (int)pi->pid, pi->ops->pl_title, pi->why);
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

void plread__hook(struct plread *py, struct lt_out *o)
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


/* @pi's binary found and read: 0 or -errno (@why says). */
static int settle(struct plread_image *pi, char *why, size_t cap)
{
	const struct lt_header *h = pi->h;
	int err;

	*why = '\0';
	err = pi->ops->pl_new(pi);
	if (!err)
		err = plread_image__find_binary(pi, h->parent, pi->ops->pl_anchor(h), why, cap);
	return err;
}

/*
 * @pi settled for good (@err, @why): named, or said and counted. The
 * stacks a dump named while it was pending are named anew.
 */
static void settled(struct plread_image *pi, int err, const char *why)
{
	struct plread *py = pi->py;
	struct htab *fresh;
	size_t pos = 0;
	void *x;

	pi->pending = false;
	pi->named = !err;
	if (htab__next(pi->stacks, &pos, NULL) && (fresh = htab__new(256, NULL, NULL))) {
		for (pos = 0; (x = htab__next(pi->stacks, &pos, NULL));)
			free(x);
		htab__free(pi->stacks);
		pi->stacks = fresh;
	}
	if (err) {
		py->unnamed++;
		elog("pid %d: its %s frames are not named (%s%s%s): its stacks stand under "
		     "the %s's C frames, cut=order", (int)pi->pid, pi->ops->pl_title,
		     strerror(-err), *why ? ": " : "", why, pi->ops->pl_loop);
	} else if (py->verbose) {
		pi->ops->pl_said(pi);
	}
}



/*
 * Its binary found once more: a process that died while it was read (its
 * /proc/PID/map_files gone between two opens) is found by its table now.
 */
static void settle_again(struct plread_image *pi)
{
	char why[512];

	settled(pi, settle(pi, why, sizeof(why)), why);
}

struct plread_image *plread_image__new(struct plread *py, pid_t pid, int pidfd,
				      const struct lt_view *view)
{
	const struct lt_header *h = view->h;
	uint32_t version = __atomic_load_n(&h->py_version, __ATOMIC_ACQUIRE);
	uint32_t lua = version ? 0 : __atomic_load_n(&h->lua_vm, __ATOMIC_ACQUIRE);
	const struct interp_ops *ops = NULL;
	struct plread_image *pi;
	char why[512];
	size_t row = 0;
	int err;

	/* The runtime whose frames its collector writes: its row reads them. */
	for (; interp_rooms[row] && row < PL_ROWS && !ops; row++)
		if (interp_rooms[row]->pl_is && interp_rooms[row]->pl_is(version, lua))
			ops = interp_rooms[row];
	if (!ops)
		return NULL;
	pi = calloc(1, sizeof(*pi));
	if (pi) {
		pi->ops = ops;
		pi->c = &py->counts[row - 1];
		pi->py = py;
		pi->h = h;
	}
	if (!pi || !(pi->stacks = htab__new(256, NULL, NULL)) || ops->pl_new(pi)) {
		elog("out of memory: pid %d's interpreter frames are not named", (int)pid);
		py->unnamed++;
		plread_image__free(pi);
		return NULL;
	}
	pi->pid = pid;
	pi->pidfd = pidfd;
	pi->view = view;
	pi->scanned = 8;	/* id 0 is no stack */
	pi->next = py->images;
	py->images = pi;
	pi->c->images++;
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

void plread_image__scan(struct plread_image *pi)
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
			if (n.n >= 1 && pi->ops->pl_record)
				pi->ops->pl_record(pi, f, n.n);
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

void plread_image__ended(struct plread_image *pi)
{
	if (!pi)
		return;
	if (pi->pending)
		settle_again(pi);
	pi->dead = true;
}

void plread_image__free(struct plread_image *pi)
{
	struct plread_image **pp;
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
	pi->c->gone += pi->gone;
	if (pi->ops->pl_free)
		pi->ops->pl_free(pi);
	if (pi->stacks)
		while ((v = htab__next(pi->stacks, &pos, NULL)))
			free(v);
	htab__free(pi->stacks);
	free(pi);
}

struct frametab *plread__frames(struct plread *py)
{
	return py ? py->ft : NULL;
}

void plread__finish(struct plread *py)
{
	/* The frames named as gone of the images still here, in their rows' counts. */
	for (struct plread_image *pi = py->images; pi; pi = pi->next) {
		pi->c->gone += pi->gone;
		pi->gone = 0;
	}
	for (size_t row = 0; interp_rooms[row] && row < PL_ROWS; row++)
		if (interp_rooms[row]->pl_finish)
			interp_rooms[row]->pl_finish(&py->counts[row], py->verbose);
	if (py->unnamed)
		elog("%" PRIu64 " processes' Lua or Python frames are not named (each said above): "
		     "their stacks stand under the interpreter loop's C frames, cut=order",
		     py->unnamed);
}

// SPDX-License-Identifier: MIT
/*
 * pllua.c - heapsnoop --preload's Lua frames (PUC 5.4, 5.1): an image
 * whose header says its collector walks a Lua state (livetable.h,
 * lua_vm) has the binary that holds lua_newstate read by the tracer's
 * luafind.c (its interpreter loop, lua_resume); each stack's Lua words
 * named from the collector's name records (LT_LUA_NAMEREC: what Lua's
 * traceback says of the frame under that caller, resolved in the
 * process, so nothing of the process is read here and a log names them
 * after a kill -9 too), cut into the interpreter loop's runs by the
 * tracer's luasegs.c and spliced at its luaV_execute frames by splice.c,
 * as the tracer's luainterp.c does. A frame with no record (its caller
 * not walked: the stack cut; the table full) is "?" in "?", counted and
 * said: never a name it did not have. docs/COLLECTOR.md, "Lua frames".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"
#include "heapsnoop/luaframe.h"
#include "htab.h"
#include "interp/lua/luafind.h"
#include "interp/lua/luasegs.h"
#include "interp/lua/pllua.h"
#include "interp/plread_int.h"
#include "interp/splice.h"
#include "msg.h"
#include "records.h"

/* A frame's name: the collector's record of it under its caller. */
struct lname {
	uint64_t key[4];	/* its code and pos words, its caller's (0 0: none) */
	int line;
	bool calls, stale;
	char *function, *file;
};

struct pllua {
	struct lua_vm_info vm;
	uint64_t bias;			/* load address - file offset of the VM's mapping */
	struct htab *names;		/* key -> struct lname */
	const struct lname *by_frame[LT_MAX_DEPTH / 2];	/* resolve()'s, for calls() */
	struct lua_frame lf[LT_MAX_DEPTH / 2];
};

static bool lname_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	(void)ctx;
	return !memcmp(((const struct lname *)stored)->key, (const uint64_t *)probe,
		       4 * sizeof(uint64_t));
}

static uint64_t key_hash(const uint64_t *k)
{
	return htab_hash2(htab_hash2(k[0], k[1]), htab_hash2(k[2], k[3]));
}

/* The image's state: its slot's (pllua__new()'s). */
static struct pllua *lua_of(const struct plread_image *pi)
{
	return pi->room;
}

int pllua__new(struct plread_image *pi)
{
	struct pllua *l;

	pllua__free(pi);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	pi->room = l;
	l->names = htab__new(256, lname_equal, NULL);
	return l->names ? 0 : -ENOMEM;
}

int pllua__read_binary(struct plread_image *pi, const char *path, uint64_t start, uint64_t off,
		       char *why, size_t cap)
{
	char root[64];
	int err;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pi->pid);
	err = lua_find__file(path, root, &lua_of(pi)->vm);
	if (err) {
		snprintf(why, cap, "%s: no Lua 5.4 or 5.1 interpreter loop found", path);
		return err;
	}
	if ((uint32_t)lua_of(pi)->vm.vm != pi->h->lua_vm) {
		snprintf(why, cap, "%s is not the Lua its collector says", path);
		return -EINVAL;
	}
	lua_of(pi)->bias = start - off;
	return 0;
}

int pllua__copy(struct plread_image *pi, const struct plread_image *parent)
{
	lua_of(pi)->vm = lua_of(parent)->vm;
	lua_of(pi)->bias = lua_of(parent)->bias;
	return 0;
}

bool pllua__record(struct plread_image *pi, const uint64_t *w, uint32_t n)
{
	struct pllua *l = lua_of(pi);
	uint64_t fn, fl;
	const char *b = (const char *)(w + LT_LUA_NAMEREC_WORDS);
	struct lname *ln;

	if (n < LT_LUA_NAMEREC_WORDS || w[0] != LT_LUA_NAMEREC)
		return false;
	fn = (w[5] >> 32) & 0xffff;
	fl = w[6];
	if (!l || !l->names || fn + fl > (uint64_t)(n - LT_LUA_NAMEREC_WORDS) * 8 ||
	    htab__find(l->names, key_hash(w + 1), (uintptr_t)(w + 1)))
		return true;
	ln = calloc(1, sizeof(*ln));
	if (!ln)
		return true;
	memcpy(ln->key, w + 1, sizeof(ln->key));
	ln->line = (int32_t)(uint32_t)w[5];
	ln->calls = w[5] & LT_LUA_REC_CALLS;
	ln->stale = w[5] & LT_LUA_REC_STALE;
	ln->function = strndup(b, fn);
	ln->file = strndup(b + fn, fl);
	if (!ln->function || !ln->file ||
	    htab__add(l->names, key_hash(ln->key), (uintptr_t)ln->key, ln)) {
		free(ln->function);
		free(ln->file);
		free(ln);
		return true;
	}
	pi->c->records++;
	return true;
}

static bool in_range(const struct pllua *l, uint64_t ra, uint64_t lo, uint64_t hi)
{
	uint64_t pc = ra - 1 - l->bias;

	return pc >= lo && pc < hi;
}

static bool is_exec(void *ctx, uint64_t ra)
{
	const struct pllua *l = ctx;

	return in_range(l, ra, l->vm.exec_off_lo, l->vm.exec_off_hi);
}

/* luasegs' 5.1 rule: is the caller's instruction a call? Its record says; unknown: yes. */
static bool calls(void *ctx, const struct lua_frame *c)
{
	const struct pllua *l = ctx;
	const struct lname *ln = l->by_frame[c - l->lf];

	return !ln || ln->calls;
}

/*
 * The Lua pairs @f[@n] named into py->iframes (*@nf of them), as
 * lua_frames into l->lf for the segments. *@more: the walk went on past
 * them; *@bad: the words are not Lua pairs.
 */
static void name_pairs(struct plread_image *pi, const uint64_t *f, uint32_t n, uint32_t *nf,
		       bool *more, bool *bad)
{
	struct pllua *l = lua_of(pi);
	struct plread *py = pi->py;
	uint32_t k = 0, np = n / 2;

	*bad = n % 2;
	for (uint32_t i = 0; i < np; i++) {
		uint64_t w = f[2 * i], pos = f[2 * i + 1];

		if (!(w & LT_PY_WORD) || (w & LT_PY_POS) ||
		    (pos & (LT_PY_WORD | LT_PY_POS)) != (LT_PY_WORD | LT_PY_POS)) {
			*bad = true;
			np = i;
			break;
		}
		l->lf[i] = (struct lua_frame){ w & LT_PY_ADDR,
			HS_LUA_POS(0, lt_lua_kind(pos), (uint64_t)lt_lua_flags(pos) << 56) };
	}
	for (uint32_t i = 0; i < np; i++) {
		bool outer = i + 1 >= np || (l->lf[i + 1].pos & HS_LUA_F_THREAD);
		uint64_t key[4] = { f[2 * i], f[2 * i + 1], outer ? 0 : f[2 * i + 2],
				    outer ? 0 : f[2 * i + 3] };
		const struct lname *ln = f[2 * i] & LT_PY_MORE ? NULL :
					 htab__find(l->names, key_hash(key), (uintptr_t)key);
		uint64_t addr;

		l->by_frame[i] = ln;
		if (!ln || ln->stale)
			pi->gone++;
		if (f[2 * i] & LT_PY_MORE)
			*more = true;
		if (frametab__intern(py->ft, (uint32_t)pi->pid, "lua", ln ? ln->function : "?",
				     ln ? ln->file : "?", ln && ln->line > 0 ? (uint32_t)ln->line : 0,
				     &addr)) {
			*more = true;	/* the frame table is full: the stack ends here */
			break;
		}
		py->iframes[k++] = addr;
		pi->c->frames++;
	}
	*nf = k;
}

struct xstack *pllua__resolve(struct plread_image *pi, uint32_t id, const uint64_t *f,
			      uint32_t depth, uint32_t cut)
{
	struct plread *py = pi->py;
	struct pllua *l = lua_of(pi);
	uint32_t nn = 0, n = 0, nf = 0, sflags = 0, nth = 1, evals[HS_LUA_THREADS + 1] = { 0 };
	struct splice_in in = { 0 };
	bool more = false, bad = false, any = false;

	while (nn < depth && !(f[nn] & LT_PY_WORD))
		nn++;
	/* The loop's frames of each thread, innermost first: lua_resume's frames part them. */
	for (uint32_t i = 0; pi->named && i < nn; i++) {
		if (is_exec(l, f[i])) {
			evals[nth - 1]++;
			any = true;
		} else if (in_range(l, f[i], l->vm.resume_off_lo, l->vm.resume_off_hi) &&
			   nth <= HS_LUA_THREADS) {
			nth++;
		}
	}
	if (!plread__unspliced(pi, f, nn, depth, any, &n, &cut)) {
		name_pairs(pi, f + nn, depth - nn, &nf, &more, &bad);
		in = (struct splice_in){ .native = f, .nnative = nn, .iframes = py->iframes,
					 .seg_end = py->seg_end, .is_eval = is_exec, .ctx = l,
					 .interp_cut = more,
					 .native_cut = cut & (REC_CUT_DEPTH | REC_CUT_UNREADABLE) };
		in.nseg = lua_segs(&(struct lua_segs_in){
					   .f = l->lf, .nf = nf, .v51 = l->vm.vm == LUA_VM_51,
					   .calls = calls, .ctx = l,
					   .evals = in.native_cut ? NULL : evals, .nthreads = nth },
				   py->seg_end, LT_MAX_DEPTH + 1);
		n = splice__frames(&in, py->out, LT_MAX_DEPTH, &sflags);
		cut = plread__splice_cut(pi, cut, sflags, any && !in.nseg, more, bad);
		pi->c->stacks++;
	}
	return plread__keep(pi, id, n, cut);
}

void pllua__free(struct plread_image *pi)
{
	struct pllua *l = lua_of(pi);
	struct lname *ln;
	size_t pos = 0;

	if (!l)
		return;
	if (l->names) {
		while ((ln = htab__next(l->names, &pos, NULL))) {
			free(ln->function);
			free(ln->file);
			free(ln);
		}
		htab__free(l->names);
	}
	free(l);
	pi->room = NULL;
}

void pllua__counts_said(const struct pl_counts *c, bool verbose)
{
	if (c->images && verbose)
		elog("Lua frames: %" PRIu64 " processes, %" PRIu64 " stacks, %" PRIu64 " names "
		     "recorded by the collector", c->images, c->stacks, c->records);
	if (c->gone)
		elog("%" PRIu64 " Lua frames are named \"?\": the collector recorded no name for "
		     "them (a stack cut, a table full: docs/COLLECTOR.md, \"Lua frames\")", c->gone);
}

// SPDX-License-Identifier: MIT
/*
 * holders.c - live bytes by the innermost function of the program's own
 * (see holders.h). The stacks added are summed by (holder, its place,
 * its caller) as they come, one entry each (a hash of them finds it),
 * with the biggest single stack's values beside the sums: a million
 * stacks of one leaking helper are a few entries, not a million; the
 * list sorts the entries by holder and caller and sums the runs, as
 * heaptrack_print merges its traces by function. Which frames are the runtime's is decided by module and
 * function name: the names are the ones the tracer probes (docs/DESIGN.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framefmt.h"
#include "frametab.h"
#include "holders.h"
#include "htab.h"
#include "records.h"
#include "text.h"

struct entry {
	char *func, *where;
	char *caller;		/* "main (x.c:9)", or NULL */
	size_t caller_len;	/* its function's name: callers are summed by it */
	uint64_t bytes, count, cut;	/* summed over its stacks */
	uint64_t big_bytes, big_count;	/* its biggest stack's */
};

struct holders {
	holders_lookup_fn fn;
	void *ctx;
	bool diff;
	struct entry *v;
	size_t n, cap;
	struct htab *idx;	/* (func, where, caller) -> its entry's index + 1 */
	struct holder *list;	/* built by holders__list */
	size_t nlist;
};

/* Does the basename @base start with one of @prefixes? */
static bool has_prefix(const char *base, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(base, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

/* Is @name (unversioned, @len bytes) one of @names? */
static bool is_one_of(const char *name, size_t len, const char *const *names)
{
	for (; *names; names++)
		if (strlen(*names) == len && !strncmp(name, *names, len))
			return true;
	return false;
}

bool holders__is_runtime(const struct sym_frame *f)
{
	/* libc++ also names LLVM's libc++abi; ld64.so is the loader of ppc64 and s390x. */
	static const char *const modules[] = {
		"libc.so", "libc-", "ld-linux", "ld64.so", "ld-musl", "libstdc++", "libc++",
		"libgcc_s", "libheapsnoop", "libjemalloc", "libtcmalloc", "libmimalloc", NULL,
	};
	/* A static program's own allocator (--allocator) is still the allocator. */
	static const char *const allocators[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc", "strdup", "strndup",
		"__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_memalign",
		"_int_malloc", "_int_realloc", "_int_memalign", "mallocx", "rallocx", NULL,
	};
	size_t len;

	if (f->kind)
		return holders__is_boundary(f);	/* an interpreter's frame is the program's */
	if (f->module && has_prefix(path_base(f->module), modules))
		return true;
	if (f->status != SYM_OK || !f->func)
		return false;
	len = symbol_unversioned_len(f->func);
	return is_one_of(f->func, len, allocators) || !strncmp(f->func, "operator new", 12) ||
	       !strncmp(f->func, "operator delete", 15);
}

bool holders__is_boundary(const struct sym_frame *f)
{
	return f->status == SYM_OK && f->kind && !strcmp(f->kind, FRAMETAB_CREATOR_KIND);
}

bool holders__is_start(const struct sym_frame *f)
{
	static const char *const starts[] = {
		"__libc_start_call_main", "__libc_start_main", "_start", "start_thread",
		"clone", "clone3", "__clone", "__clone3", "__clone_internal", NULL,
	};
	/*
	 * arm64 glibc's clone and clone3 run a new thread from their local
	 * label thread_start (named by its debug symbols): a start in the C
	 * library only, where a program's own thread_start is its code.
	 */
	static const char *const libc_starts[] = { "thread_start", NULL };
	static const char *const libc[] = { "libc.so", "libc-", NULL };
	size_t len;

	if (f->status != SYM_OK || !f->func || f->kind)
		return false;
	len = symbol_unversioned_len(f->func);
	return is_one_of(f->func, len, starts) ||
	       (f->module && has_prefix(path_base(f->module), libc) &&
		is_one_of(f->func, len, libc_starts));
}

/*
 * Logical frame @level of physical frame @f at @addr (0..f->ninline - 1:
 * an inlined function, innermost first; f->ninline: the function itself):
 * its name into @name, its "file:line" into @where ("" if none). @f NULL:
 * a frame that could not be named.
 */
static void logical(const struct sym_frame *f, int level, uint64_t addr, char *name,
		    size_t ncap, char *where, size_t wcap)
{
	const char *func = NULL, *file = NULL;
	int line = 0;

	where[0] = '\0';
	if (!f) {
		snprintf(name, ncap, "[%#" PRIx64 "]", addr);
		return;
	}
	if (f->status != SYM_OK) {
		if (f->module && f->status != SYM_UNMAPPED)
			snprintf(name, ncap, "[%s+%#" PRIx64 "]", path_base(f->module),
				 framefmt__module_off(f));
		else
			snprintf(name, ncap, "[%#" PRIx64 "]", addr);
		return;
	}
	if (level < f->ninline) {
		func = f->inl[level].func ? f->inl[level].func : "??";
		file = f->inl[level].file;
		line = f->inl[level].line;
	} else {
		func = f->func;
		file = f->file;
		line = f->line;
	}
	if (f->kind) {
		/* An interpreter's function is named with where it is (hd_model__frame_name). */
		if (file && line)
			snprintf(name, ncap, "%s (%s:%d)", func, path_base(file), line);
		else if (file)
			snprintf(name, ncap, "%s (%s)", func, path_base(file));
		else
			snprintf(name, ncap, "%s", func);
		return;
	}
	snprintf(name, ncap, "%.*s", (int)symbol_unversioned_len(func), func);
	if (file && line)
		snprintf(where, wcap, "%s:%d", path_base(file), line);
	else if (file)
		snprintf(where, wcap, "%s", path_base(file));
}

/* Biggest first, signed (differences); then more blocks; then by name. */
static int cmp_values(uint64_t xb, uint64_t xc, uint64_t yb, uint64_t yc)
{
	if (xb != yb)
		return (int64_t)xb < (int64_t)yb ? 1 : -1;
	if (xc != yc)
		return (int64_t)xc < (int64_t)yc ? 1 : -1;
	return 0;
}

/* A stack's holder and its caller, as text. */
struct pick {
	char func[256], where[128], caller[400];
	size_t caller_len;	/* of the function's name in caller */
};

static void pick_of(holders_lookup_fn fn, void *ctx, uint32_t pid, const uint64_t *frames,
		    uint32_t depth, struct pick *p)
{
	struct sym_frame f, hf, cf;
	bool named, hnamed = false, cnamed;
	int64_t idx = -1, fallback = -1;
	char cname[256], cwhere[128];

	p->caller[0] = p->where[0] = '\0';
	p->caller_len = 0;
	if (!depth) {
		snprintf(p->func, sizeof(p->func), "[no stack]");
		return;
	}
	/*
	 * A stack with an interpreter's frames (records.h: an address no
	 * native code has): its innermost one holds, the script's function,
	 * not the interpreter's own C below it (gc_alloc, PyBytes_FromSize),
	 * as memray and py-spy name Python's; its caller the next one out.
	 */
	for (uint32_t k = 0; k < depth; k++) {
		if (!rec_is_frame_addr(frames[k]) || !fn(ctx, pid, frames[k], &hf) ||
		    hf.status != SYM_OK || holders__is_boundary(&hf))
			continue;
		logical(&hf, 0, frames[k], p->func, sizeof(p->func), p->where, sizeof(p->where));
		for (uint32_t j = k + 1; j < depth; j++) {
			if (!rec_is_frame_addr(frames[j]) || !fn(ctx, pid, frames[j], &cf) ||
			    cf.status != SYM_OK || holders__is_boundary(&cf))
				continue;
			logical(&cf, 0, frames[j], cname, sizeof(cname), cwhere, sizeof(cwhere));
			p->caller_len = strlen(cname);
			snprintf(p->caller, sizeof(p->caller), "%s", cname);
			break;
		}
		return;
	}
	for (uint32_t k = 0; k < depth && idx < 0; k++) {
		named = fn(ctx, pid, frames[k], &f);
		if (named && holders__is_runtime(&f))
			continue;
		if (named && f.status == SYM_OK) {
			idx = k;
			hf = f;
			hnamed = true;
		} else if (fallback < 0) {
			fallback = k;
		}
	}
	if (idx < 0) {
		/* Nothing of the program's named: the first frame not the runtime's. */
		idx = fallback >= 0 ? fallback : 0;
		hnamed = fn(ctx, pid, frames[idx], &hf);
	}
	logical(hnamed ? &hf : NULL, 0, frames[idx], p->func, sizeof(p->func), p->where,
		sizeof(p->where));
	if (hnamed && hf.status == SYM_OK && hf.ninline) {
		/* An inlined function's caller: the next one out, in the same frame. */
		logical(&hf, 1, frames[idx], cname, sizeof(cname), cwhere, sizeof(cwhere));
	} else if ((uint32_t)idx + 1 < depth) {
		cnamed = fn(ctx, pid, frames[idx + 1], &cf);
		if (cnamed && holders__is_start(&cf))
			return;	/* main, or a thread's function: called by the runtime */
		logical(cnamed ? &cf : NULL, 0, frames[idx + 1], cname, sizeof(cname), cwhere,
			sizeof(cwhere));
	} else {
		return;
	}
	p->caller_len = strlen(cname);
	if (cwhere[0])
		snprintf(p->caller, sizeof(p->caller), "%s (%s)", cname, cwhere);
	else
		snprintf(p->caller, sizeof(p->caller), "%s", cname);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	/* A string's end: ("ab", "c") is not ("a", "bc"). */
	return (htab_hash_str(h, s) ^ 0xff) * 0x100000001b3ULL;
}

/* A stack's (holder, place, caller) @p, as an entry's index is found by it. */
static uint64_t pick_hash(const struct pick *p)
{
	return str_hash(str_hash(str_hash(HTAB_STR_SEED, p->func), p->where), p->caller);
}

/* Stored: an entry's index + 1 (@ctx the set); probe: a struct pick. */
static bool pick_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct entry *e = &((struct holders *)ctx)->v[stored - 1];
	const struct pick *p = (const struct pick *)probe;

	return !strcmp(e->func, p->func) && !strcmp(or_empty(e->where), p->where) &&
	       !strcmp(or_empty(e->caller), p->caller);
}

struct holders *holders__new(holders_lookup_fn fn, void *ctx, bool diff)
{
	struct holders *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	*h = (struct holders){ .fn = fn, .ctx = ctx, .diff = diff };
	h->idx = htab__new(64, pick_equal, h);
	if (!h->idx) {
		free(h);
		return NULL;
	}
	return h;
}

static void free_list(struct holders *h)
{
	for (size_t i = 0; i < h->nlist; i++) {
		for (size_t j = 0; j < h->list[i].ncallers; j++)
			free(h->list[i].callers[j].name);
		free(h->list[i].callers);
		free(h->list[i].func);
		free(h->list[i].where);
		free(h->list[i].caller);
	}
	free(h->list);
	h->list = NULL;
	h->nlist = 0;
}

void holders__free(struct holders *h)
{
	if (!h)
		return;
	free_list(h);
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].func);
		free(h->v[i].where);
		free(h->v[i].caller);
	}
	free(h->v);
	htab__free(h->idx);
	free(h);
}

int holders__add(struct holders *h, uint32_t pid, const uint64_t *frames, uint32_t depth,
		 uint64_t bytes, uint64_t count, uint64_t cut)
{
	struct pick p;
	struct entry *e;
	uint64_t hash;
	uintptr_t i;

	pick_of(h->fn, h->ctx, pid, frames, depth, &p);
	hash = pick_hash(&p);
	i = (uintptr_t)htab__find(h->idx, hash, (uintptr_t)&p);
	if (i) {
		/* One more stack of a (holder, place, caller) seen: summed into its entry. */
		e = &h->v[i - 1];
		e->bytes += bytes;
		e->count += count;
		e->cut += cut;
		if (cmp_values(bytes, count, e->big_bytes, e->big_count) < 0) {
			e->big_bytes = bytes;
			e->big_count = count;
		}
		free_list(h);
		return 0;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct entry *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	e = &h->v[h->n];
	*e = (struct entry){ strdup(p.func), p.where[0] ? strdup(p.where) : NULL,
			     p.caller[0] ? strdup(p.caller) : NULL, p.caller_len, bytes, count, cut,
			     bytes, count };
	if (!e->func || (p.where[0] && !e->where) || (p.caller[0] && !e->caller) ||
	    htab__add(h->idx, hash, (uintptr_t)h->n + 1, (void *)((uintptr_t)h->n + 1))) {
		free(e->func);
		free(e->where);
		free(e->caller);
		return -ENOMEM;
	}
	h->n++;
	free_list(h);
	return 0;
}


/* Do @x and @y have one caller function (NULL: none)? <0, 0, >0 as strcmp. */
static int caller_cmp(const struct entry *x, const struct entry *y)
{
	size_t n = x->caller_len < y->caller_len ? x->caller_len : y->caller_len;
	int c = strncmp(or_empty(x->caller), or_empty(y->caller), n);

	return c ? c : x->caller_len < y->caller_len ? -1 : x->caller_len > y->caller_len;
}

static int entry_by_key(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->func, y->func);

	/* A total order, so that of equals the first is the same in both programs. */
	c = c ? c : caller_cmp(x, y);
	c = c ? c : strcmp(or_empty(x->caller), or_empty(y->caller));
	c = c ? c : strcmp(or_empty(x->where), or_empty(y->where));
	return c ? c : cmp_values(x->big_bytes, x->big_count, y->big_bytes, y->big_count);
}

static int holder_by_bytes(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;
	int c = cmp_values(x->bytes, x->count, y->bytes, y->count);

	return c ? c : strcmp(x->func, y->func);
}

static int caller_by_bytes(const void *a, const void *b)
{
	const struct holder_caller *x = a, *y = b;
	int c = cmp_values(x->bytes, x->count, y->bytes, y->count);

	return c ? c : strcmp(x->name, y->name);
}

/*
 * Holder @o from entries [@i, @j) (one function, sorted by caller
 * function): a caller is named by its biggest entry. 0 or -ENOMEM.
 */
static int build_one(struct holder *o, const struct entry *v, size_t i, size_t j)
{
	const struct entry *big = &v[i];

	*o = (struct holder){ .func = strdup(v[i].func) };
	o->callers = calloc(j - i, sizeof(*o->callers));
	if (!o->func || !o->callers)
		return -ENOMEM;
	for (size_t k = i, l; k < j; k = l) {
		struct holder_caller *c = &o->callers[o->ncallers++];
		const struct entry *cbig = &v[k];

		for (l = k; l < j && !caller_cmp(&v[l], &v[k]); l++) {
			c->bytes += v[l].bytes;
			c->count += v[l].count;
			o->cut += v[l].cut;
			/* Named by the biggest stack, as when each stack was an entry. */
			if (cmp_values(v[l].big_bytes, v[l].big_count, cbig->big_bytes,
				       cbig->big_count) < 0)
				cbig = &v[l];
			if (cmp_values(v[l].big_bytes, v[l].big_count, big->big_bytes,
				       big->big_count) < 0)
				big = &v[l];
		}
		o->bytes += c->bytes;
		o->count += c->count;
		c->name = strdup(cbig->caller ? cbig->caller : "[no caller]");
		if (!c->name)
			return -ENOMEM;
	}
	qsort(o->callers, o->ncallers, sizeof(*o->callers), caller_by_bytes);
	o->where = big->where ? strdup(big->where) : NULL;
	o->caller = big->caller ? strdup(big->caller) : NULL;
	return (big->where && !o->where) || (big->caller && !o->caller) ? -ENOMEM : 0;
}

const struct holder *holders__list(struct holders *h, size_t *n)
{
	struct entry *v;

	*n = 0;
	if (h->list || !h->n) {
		*n = h->nlist;
		return h->list;
	}
	/* Sorted in a copy (its strings the entries'): the index holds the entries' places. */
	v = malloc(h->n * sizeof(*v));
	h->list = calloc(h->n, sizeof(*h->list));
	if (!v || !h->list) {
		free(v);
		free(h->list);
		h->list = NULL;
		return NULL;
	}
	memcpy(v, h->v, h->n * sizeof(*v));
	qsort(v, h->n, sizeof(*v), entry_by_key);
	for (size_t i = 0, j; i < h->n; i = j) {
		for (j = i + 1; j < h->n && !strcmp(v[j].func, v[i].func); j++)
			;
		if (build_one(&h->list[h->nlist++], v, i, j)) {
			free(v);
			free_list(h);
			return NULL;
		}
	}
	free(v);
	qsort(h->list, h->nlist, sizeof(*h->list), holder_by_bytes);
	*n = h->nlist;
	return h->list;
}

bool holders__headline(struct holders *h, const char *what, char *buf, size_t cap)
{
	size_t n;
	const struct holder *v = holders__list(h, &n);
	char size[32];
	int64_t count;

	buf[0] = '\0';
	if (!n || (int64_t)v[0].bytes <= 0)
		return false;
	count = (int64_t)v[0].count;
	snprintf(buf, cap, "%s: %s in %s%" PRId64 " block%s, %s%s%s%s%s%s", what,
		 text_size(v[0].bytes, h->diff, size), h->diff && count > 0 ? "+" : "", count,
		 count == 1 ? "" : "s", v[0].func, v[0].where ? " (" : "",
		 or_empty(v[0].where), v[0].where ? ")" : "", v[0].caller ? " <- " : "",
		 or_empty(v[0].caller));
	return true;
}

void holders__name(holders_lookup_fn fn, void *ctx, uint32_t pid, const uint64_t *frames,
		   uint32_t depth, char *buf, size_t cap)
{
	struct pick p;

	pick_of(fn, ctx, pid, frames, depth, &p);
	snprintf(buf, cap, "%s", p.func);
}

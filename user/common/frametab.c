// SPDX-License-Identifier: MIT
/*
 * frametab.c - the frames that are not native code (see frametab.h).
 * Per process: its interpreter frames by synthetic address (and, for a
 * writer, by content, to give the same frame the same address), and its
 * JIT ranges, kept sorted and without overlap (a range added is kept
 * apart until the next lookup, then merged: a perf map adds them one at
 * a time, lookups come at dumps). Every table is the generic one
 * (htab.h). Strings a lookup hands out stay until the table is freed,
 * even when a later record replaces what named them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"
#include "frametab_int.h"
#include "htab.h"
#include "text.h"

static const struct fkind jit_kind = { "jit", "[jit]" };

/* --- strings ---------------------------------------------------------------- */

/* @s (NULL: "") cut to @max bytes, "..." at its end, never inside a UTF-8 character. */
static char *dup_cut(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0, keep;
	char *d;

	if (n <= max)
		return strdup(s ? s : "");
	keep = max - 3;
	while (keep && ((unsigned char)s[keep] & 0xc0) == 0x80)
		keep--;
	d = malloc(keep + 4);
	if (!d)
		return NULL;
	memcpy(d, s, keep);
	memcpy(d + keep, "...", 4);
	return d;
}

/*
 * Texts no longer named: freed if never handed out (@printable NULL),
 * else kept until the table is freed.
 */
static int retire(struct frametab *ft, char *s);

static int drop_texts(struct frametab *ft, char *raw, char *printable)
{
	if (!printable) {
		free(raw);
		return 0;
	}
	if (printable != raw && retire(ft, printable))
		return -ENOMEM;
	return retire(ft, raw);
}

static int retire(struct frametab *ft, char *s)
{
	if (!s)
		return 0;
	if (ft->nretired == ft->capretired) {
		size_t cap = ft->capretired ? ft->capretired * 2 : 64;
		char **v = realloc(ft->retired, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ft->retired = v;
		ft->capretired = cap;
	}
	ft->retired[ft->nretired++] = s;
	return 0;
}

/* @raw's printable form, made once into *@p (NULL: no memory, @raw then). */
static const char *printable(char **p, char *raw)
{
	if (!*p)
		*p = text_printable(raw);
	return *p ? *p : raw;
}

static void free_printable(char *p, char *raw)
{
	if (p != raw)
		free(p);
}

/* --- kinds, processes --------------------------------------------------------- */

/* The kind @name, added if new; NULL: a bad name, "jit", or too many. */
const struct fkind *ft_kind_of(struct frametab *ft, const char *name)
{
	size_t n = strlen(name);

	if (!n || n > REC_KIND_MAX || name[0] < 'a' || name[0] > 'z' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != n || !strcmp(name, "jit"))
		return NULL;
	for (size_t i = 0; i < ft->nkinds; i++)
		if (!strcmp(ft->kinds[i].name, name))
			return &ft->kinds[i];
	if (ft->nkinds == MAX_KINDS)
		return NULL;
	snprintf(ft->kinds[ft->nkinds].name, sizeof(ft->kinds[0].name), "%s", name);
	snprintf(ft->kinds[ft->nkinds].module, sizeof(ft->kinds[0].module), "[%s]", name);
	return &ft->kinds[ft->nkinds++];
}

static bool same_addr(uintptr_t stored, uintptr_t probe, void *ctx)
{
	(void)ctx;
	return ((const struct fframe *)stored)->addr == *(const uint64_t *)probe;
}

/* What frametab__intern looks for. */
struct content {
	const struct fkind *kind;
	const char *function, *file;
	uint32_t line;
};

static bool same_content(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct fframe *f = (const void *)stored;
	const struct content *c = (const void *)probe;

	(void)ctx;
	return f->kind == c->kind && f->line == c->line && !strcmp(f->function, c->function) &&
	       !strcmp(f->file, c->file);
}

static uint64_t hash_content(const struct content *c)
{
	uint64_t h = htab_hash_str(htab_hash_str(HTAB_STR_SEED, c->function), c->file);

	return htab_hash2(h ^ (uintptr_t)c->kind, c->line);
}

struct fproc *ft_proc_of(struct frametab *ft, uint32_t pid, bool create)
{
	uint64_t h = htab_hash2(pid, 0);
	struct fproc *p = htab__find(ft->procs, h, pid);

	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->by_addr = htab__new(16, same_addr, NULL);
	p->by_content = htab__new(16, same_content, NULL);
	if (!p->by_addr || !p->by_content || htab__add(ft->procs, h, pid, p)) {
		htab__free(p->by_addr);
		htab__free(p->by_content);
		free(p);
		return NULL;
	}
	return p;
}

static void free_frame(struct fframe *f)
{
	free_printable(f->pfunction, f->function);
	free_printable(f->pfile, f->file);
	free(f->function);
	free(f->file);
	free(f);
}

static void free_proc(struct fproc *p)
{
	struct fframe *f;
	size_t pos = 0;

	while ((f = htab__next(p->by_addr, &pos, NULL)))
		free_frame(f);
	for (size_t i = 0; i < p->jit.n; i++) {
		free_printable(p->jit.v[i].pname, p->jit.v[i].name);
		free_printable(p->jit.v[i].pfile, p->jit.v[i].file);
		free(p->jit.v[i].name);
		free(p->jit.v[i].file);
	}
	free(p->jit.v);
	free(p->need);
	htab__free(p->by_addr);
	htab__free(p->by_content);
	free(p);
}

struct frametab *frametab__new(void)
{
	struct frametab *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return NULL;
	ft->procs = htab__new(16, NULL, NULL);
	if (!ft->procs) {
		free(ft);
		return NULL;
	}
	return ft;
}

void frametab__free(struct frametab *ft)
{
	struct fproc *p;
	size_t pos = 0;

	if (!ft)
		return;
	while ((p = htab__next(ft->procs, &pos, NULL)))
		free_proc(p);
	htab__free(ft->procs);
	for (size_t i = 0; i < ft->nretired; i++)
		free(ft->retired[i]);
	free(ft->retired);
	free(ft);
}

void frametab__forget(struct frametab *ft, uint32_t pid)
{
	struct fproc *p = htab__delete(ft->procs, htab_hash2(pid, 0), pid);

	if (!p)
		return;
	ft->nframes -= htab__count(p->by_addr);
	ft->memory -= p->memory;
	free_proc(p);
}

/* --- interpreter frames --------------------------------------------------------- */

/* @f's function and file become @function and @file (the old ones dropped). */
int ft_set_texts(struct frametab *ft, struct fframe *f, char *function, char *file)
{
	if (drop_texts(ft, f->function, f->pfunction) || drop_texts(ft, f->file, f->pfile))
		return -ENOMEM;
	f->function = function;
	f->file = file;
	f->pfunction = f->pfile = NULL;
	return 0;
}

/* A new frame of @p at @addr, its texts @function and @file (taken). */
struct fframe *ft_add_frame(struct frametab *ft, struct fproc *p, uint64_t addr,
				char *function, char *file)
{
	struct fframe *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	/* The key is the frame itself, compared by its address. */
	f->pid = p->pid;
	f->addr = addr;
	if (htab__add(p->by_addr, htab_hash2(addr, 0), (uintptr_t)f, f)) {
		free(f);
		return NULL;
	}
	f->function = function;
	f->file = file;
	f->gen = ft->gen - 1;
	ft->nframes++;
	p->memory += sizeof(*f) + strlen(function) + strlen(file) + 2;
	ft->memory += sizeof(*f) + strlen(function) + strlen(file) + 2;
	return f;
}

struct fframe *ft_frame_at(struct fproc *p, uint64_t addr)
{
	return htab__find(p->by_addr, htab_hash2(addr, 0), (uintptr_t)&addr);
}

int frametab__intern(struct frametab *ft, uint32_t pid, const char *kind, const char *function,
		     const char *file, uint32_t line, uint64_t *addr)
{
	struct content c = { ft_kind_of(ft, kind), function, file ? file : "", line };
	struct fproc *p;
	struct fframe *f;
	char *fn, *fl;

	if (!c.kind || !function)
		return -EINVAL;
	/* Compared as they will be kept: cut alike. */
	fn = dup_cut(function, REC_NAME_MAX);
	fl = dup_cut(c.file, REC_FILE_MAX);
	p = ft_proc_of(ft, pid, true);
	if (!fn || !fl || !p)
		goto nomem;
	c.function = fn;
	c.file = fl;
	f = htab__find(p->by_content, hash_content(&c), (uintptr_t)&c);
	if (f) {
		free(fn);
		free(fl);
		*addr = f->addr;
		return 0;
	}
	if (ft->nframes >= FRAMETAB_MAX_FRAMES) {
		free(fn);
		free(fl);
		return -ENOSPC;
	}
	f = ft_add_frame(ft, p, REC_FRAME_BASE + ft->next_id, fn, fl);
	if (!f)
		goto nomem;
	f->kind = c.kind;
	f->line = line;
	f->hash = hash_content(&c);
	if (htab__add(p->by_content, f->hash, (uintptr_t)f, f)) {
		htab__delete(p->by_addr, htab_hash2(f->addr, 0), (uintptr_t)&f->addr);
		ft->nframes--;
		free_frame(f);
		return -ENOMEM;
	}
	ft->next_id++;
	*addr = f->addr;
	return 0;
nomem:
	free(fn);
	free(fl);
	return -ENOMEM;
}

int frametab__rename(struct frametab *ft, uint32_t pid, uint64_t old, uint64_t new)
{
	struct fproc *p = ft_proc_of(ft, pid, false);
	struct fframe *fo = p ? ft_frame_at(p, old) : NULL;
	struct fframe *fn = p ? ft_frame_at(p, new) : NULL;
	struct content c;
	char *function, *file;
	size_t was;

	if (!fo || !fn || !fo->kind || !fn->kind)
		return -ENOENT;
	if (fo == fn || (fo->kind == fn->kind && fo->line == fn->line &&
			 !strcmp(fo->function, fn->function) && !strcmp(fo->file, fn->file)))
		return 0;
	function = strdup(fn->function);
	file = strdup(fn->file);
	if (!function || !file) {
		free(function);
		free(file);
		return -ENOMEM;
	}
	/* Its old texts intern to a new address from now on. */
	c = (struct content){ fo->kind, fo->function, fo->file, fo->line };
	if (htab__find(p->by_content, fo->hash, (uintptr_t)&c) == fo)
		htab__delete(p->by_content, fo->hash, (uintptr_t)&c);
	was = strlen(fo->function) + strlen(fo->file);
	if (ft_set_texts(ft, fo, function, file)) {
		free(function);
		free(file);
		return -ENOMEM;
	}
	fo->kind = fn->kind;
	fo->line = fn->line;
	fo->hash = 0;
	p->memory += strlen(function) + strlen(file) - was;
	ft->memory += strlen(function) + strlen(file) - was;
	return 0;
}

/* --- JIT ranges ------------------------------------------------------------------ */

static int by_start(const void *a, const void *b)
{
	const struct jrange *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool same_range(const struct jrange *a, const struct jrange *b)
{
	return a->start == b->start && a->end == b->end && !strcmp(a->name, b->name) &&
	       !strcmp(a->file, b->file) && a->line == b->line && a->code == b->code;
}

/*
 * The ranges added since the last merge sorted in: all by start, then
 * each overlap resolved for the newer range, unless it is the same range
 * again (each dump repeats its ranges: the older, maybe handed out, stays).
 */
void ft_merge_jit(struct frametab *ft, struct jset *js)
{
	size_t k = 0;

	if (js->nsorted == js->n)
		return;
	qsort(js->v, js->n, sizeof(*js->v), by_start);
	for (size_t i = 0; i < js->n; i++) {
		struct jrange *last = k ? &js->v[k - 1] : NULL, *r = &js->v[i];

		if (last && last->end > r->start) {
			bool newer = r->seq > last->seq && !same_range(r, last);
			struct jrange *gone = newer ? last : r;

			drop_texts(ft, gone->name, gone->pname);
			drop_texts(ft, gone->file, gone->pfile);
			if (newer)
				*last = *r;
			continue;
		}
		js->v[k++] = *r;
	}
	js->n = js->nsorted = k;
}

int ft_add_range(struct frametab *ft, struct fproc *p, uint64_t start, uint64_t end,
		 char *name, char *file, uint32_t line, uint64_t code)
{
	size_t bytes = sizeof(struct jrange) + strlen(name) + strlen(file) + 2;
	struct jset *js = &p->jit;

	if (js->n >= FRAMETAB_MAX_JIT) {
		ft_merge_jit(ft, js);
		if (js->n >= FRAMETAB_MAX_JIT)
			return -ENOSPC;
	}
	if (js->n == js->cap) {
		size_t cap = js->cap ? js->cap * 2 : 64;
		struct jrange *v = realloc(js->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		js->v = v;
		js->cap = cap;
	}
	js->v[js->n++] = (struct jrange){ .start = start, .end = end, .seq = ft->seq++,
					  .name = name, .file = file, .line = line,
					  .code = code && code <= start ? code : start,
					  .gen = ft->gen - 1 };
	p->memory += bytes;
	ft->memory += bytes;
	return 0;
}

int frametab__add_jit(struct frametab *ft, uint32_t pid, uint64_t start, uint64_t end,
		      const char *name)
{
	return frametab__add_jit_line(ft, pid, start, end, name, NULL, 0, start);
}

int frametab__add_jit_line(struct frametab *ft, uint32_t pid, uint64_t start, uint64_t end,
			   const char *name, const char *file, uint32_t line, uint64_t code)
{
	struct fproc *p;
	char *n, *f;
	int err;

	if (start >= end || end > REC_FRAME_BASE || !name || code > start)
		return -EINVAL;
	p = ft_proc_of(ft, pid, true);
	n = p ? dup_cut(name, REC_NAME_MAX) : NULL;
	f = n ? dup_cut(file, REC_FILE_MAX) : NULL;
	if (!f) {
		free(n);
		return -ENOMEM;
	}
	err = ft_add_range(ft, p, start, end, n, f, line, code);
	if (err) {
		free(n);
		free(f);
	}
	return err;
}

/* The range of @p holding @addr, or NULL. */
struct jrange *ft_range_at(struct frametab *ft, struct fproc *p, uint64_t addr)
{
	struct jset *js = &p->jit;
	size_t lo = 0, hi;

	ft_merge_jit(ft, js);
	hi = js->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (js->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < js->v[lo - 1].end ? &js->v[lo - 1] : NULL;
}

/* --- lookups ------------------------------------------------------------------------- */

bool frametab__symbolize(struct frametab *ft, uint32_t pid, uint64_t addr, struct sym_frame *f)
{
	struct fproc *p = ft_proc_of(ft, pid, rec_is_frame_addr(addr));
	struct fframe *fr;
	struct jrange *r;

	if (rec_is_frame_addr(addr)) {
		memset(f, 0, sizeof(*f));
		f->status = SYM_NO_FRAME;
		fr = p ? ft_frame_at(p, addr) : NULL;
		/* Said once: a placeholder keeps the count of distinct ones. */
		if (!fr && p) {
			char *a = strdup(""), *b = strdup("");

			if (a && b && (fr = ft_add_frame(ft, p, addr, a, b)))
				ft->missing++;
			else
				free(a), free(b);
		}
		if (!fr || !fr->kind)
			return true;
		f->status = SYM_OK;
		f->kind = fr->kind->name;
		f->module = fr->kind->module;
		f->func = printable(&fr->pfunction, fr->function);
		f->file = *fr->file ? printable(&fr->pfile, fr->file) : NULL;
		f->line = (int)(fr->line <= INT32_MAX ? fr->line : 0);
		return true;
	}
	/* A return address: its call is the byte before (the range's last, maybe). */
	r = p && p->jit.n && addr ? ft_range_at(ft, p, addr - 1) : NULL;
	if (!r)
		return false;
	memset(f, 0, sizeof(*f));
	f->status = SYM_OK;
	f->kind = jit_kind.name;
	f->module = jit_kind.module;
	f->func = printable(&r->pname, r->name);
	f->func_off = addr - r->code;
	f->file = *r->file ? printable(&r->pfile, r->file) : NULL;
	f->line = (int)(r->line <= INT32_MAX ? r->line : 0);
	return true;
}

bool frametab__known(struct frametab *ft, uint32_t pid, uint64_t addr)
{
	struct fproc *p = ft_proc_of(ft, pid, false);
	struct fframe *f = p ? ft_frame_at(p, addr) : NULL;

	return f && f->kind;
}

size_t frametab__missing(const struct frametab *ft)
{
	return ft->missing;
}

size_t frametab__memory(const struct frametab *ft)
{
	return ft->memory + htab__memory(ft->procs);
}

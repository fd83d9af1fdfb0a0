// SPDX-License-Identifier: MIT
/* ustacks.c - `ustack` records unwound offline (see ustacks.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "input/ustacks.h"
#include "mapset.h"
#include "msg.h"
#include "stacks.h"
#include "unwind/otherarch.h"
#include "unwind/unwind.h"

/* A module a `map` record names: its path and build ID, its made-up identity (ino). */
struct umod {
	char *path;
	char build_id[BUILD_ID_HEX_SIZE];
	uint64_t id;		/* 1..: the mappings' ino, the CFI cache's key */
	uint8_t tried;		/* bit w: unwinder w (this architecture's 0, the other's 1) asked */
	bool found, debug;
	enum sym_status why;	/* ... when not found */
};

/*
 * A process's mappings of the dump: appended as the `map` records come
 * (any number, any order: O(1) each), sorted once when a walk first
 * needs them.
 */
struct umaps {
	struct mapset *pm;
	size_t cap;
	bool sorted;
};

/* What each unwinder's cfi_src is given: the reader, and which unwinder it is. */
struct usrc {
	struct hd_ustacks *u;
	unsigned int w;
};

struct hd_ustacks {
	struct symbolizer *sym;
	struct usrc src[2];
	struct unwinder *uw;
	struct other_unwinder *ouw;	/* the other architecture's, made when first needed */
	struct htab *maps;	/* pid -> struct umaps, the dump's */
	struct htab *mods;	/* (path, build ID) -> struct umod, every dump's */
	struct umod **byid;	/* id - 1 -> the same */
	size_t nmods, capmods;
	/* The record held for the live record after it (@other: the other architecture's). */
	bool held, other;
	uint64_t regs[REC_USTACK_MAX_REGS];
	int pid;
	uint64_t ptr;
	uint32_t frames;
	struct hs_user_stack *us;	/* its header, then its bytes */
	size_t len, cap;
	uint64_t *out;		/* the offline frames (REC_MAX_DEPTH) */
	struct hd_ustacks_stats st;
};

struct umod_key {
	const char *path, *build_id;
};

static bool umod_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct umod *m = (const struct umod *)stored;
	const struct umod_key *k = (const struct umod_key *)probe;

	(void)ctx;
	return !strcmp(m->path, k->path) && !strcmp(m->build_id, k->build_id);
}

/*
 * cfi_src's open: the module's files (symbolizer.h), looked for once
 * (each unwinder keeps what it opened; one not found is not looked for
 * again), counted once.
 */
static int umod_open(void *ctx, pid_t pid, const struct mapping *m, int *fd, int *debug_fd)
{
	const struct usrc *src = ctx;
	struct hd_ustacks *u = src->u;
	struct umod *mod = m->ino && m->ino <= u->nmods ? u->byid[m->ino - 1] : NULL;
	bool first;

	(void)pid;
	if (!mod || !u->sym || (mod->tried & (1u << src->w)) || (mod->tried && !mod->found))
		return -ENOENT;
	first = !mod->tried;
	mod->tried |= (uint8_t)(1u << src->w);
	if (symbolizer__module_files(u->sym, mod->path, mod->build_id, fd, debug_fd, &mod->why)) {
		u->st.modules++;
		u->st.modules_missing++;
		return -ENOENT;
	}
	if (first) {
		u->st.modules++;
		u->st.debug_files += *debug_fd >= 0;
	}
	mod->found = true;
	mod->debug = *debug_fd >= 0;
	return 0;
}

struct hd_ustacks *hd_ustacks__new(struct symbolizer *sym)
{
	struct hd_ustacks *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sym = sym;
	u->src[0] = (struct usrc){ u, 0 };
	u->src[1] = (struct usrc){ u, 1 };
	u->uw = unwinder__new(&(struct cfi_src){ .open = umod_open, .ctx = &u->src[0] });
	u->maps = htab__new(16, NULL, NULL);
	u->mods = htab__new(64, umod_equal, NULL);
	u->out = malloc(REC_MAX_DEPTH * sizeof(*u->out));
	if (!u->uw || !u->maps || !u->mods || !u->out) {
		hd_ustacks__free(u);
		return NULL;
	}
	return u;
}

void hd_ustacks__reset(struct hd_ustacks *u)
{
	struct umaps *um;
	size_t pos = 0;

	if (u->held)
		u->st.unmatched++;
	u->held = false;
	while (u->maps && (um = htab__next(u->maps, &pos, NULL))) {
		mapset__free(um->pm);
		free(um);
	}
	htab__free(u->maps);
	u->maps = htab__new(16, NULL, NULL);
}

void hd_ustacks__free(struct hd_ustacks *u)
{
	if (!u)
		return;
	/* The unwinders' modules first: their files are the symbolizer's to name. */
	unwinder__free(u->uw);
	other_unwinder__free(u->ouw);
	if (u->maps)
		hd_ustacks__reset(u);
	htab__free(u->maps);
	for (size_t i = 0; i < u->nmods; i++) {
		free(u->byid[i]->path);
		free(u->byid[i]);
	}
	free(u->byid);
	htab__free(u->mods);
	free(u->us);
	free(u->out);
	free(u);
}

/* The module of @path and @build_id, made on first sight; NULL: no memory. */
static struct umod *umod_of(struct hd_ustacks *u, const char *path, const char *build_id)
{
	struct umod_key k = { path, build_id };
	uint64_t h = htab_hash_str(htab_hash_str(HTAB_STR_SEED, path), build_id);
	struct umod *m = htab__find(u->mods, h, (uintptr_t)&k);

	if (m)
		return m;
	if (u->nmods == u->capmods) {
		size_t cap = u->capmods ? u->capmods * 2 : 32;
		struct umod **v = realloc(u->byid, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->byid = v;
		u->capmods = cap;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path)) || htab__add(u->mods, h, (uintptr_t)m, m)) {
		if (m)
			free(m->path);
		free(m);
		return NULL;
	}
	snprintf(m->build_id, sizeof(m->build_id), "%s", build_id);
	u->byid[u->nmods++] = m;
	m->id = u->nmods;
	return m;
}

int hd_ustacks__map(struct hd_ustacks *u, const struct record *r)
{
	uint64_t h = htab_hash2((uint32_t)r->pid, 0);
	struct umaps *um = u->maps ? htab__find(u->maps, h, (uintptr_t)(uint32_t)r->pid) : NULL;
	struct mapping m = { .start = r->start, .end = r->end, .offset = r->off };
	struct umod *mod;

	if (!u->maps)
		return -ENOMEM;
	if (r->end <= r->start)
		return 0;
	if (!um) {
		um = calloc(1, sizeof(*um));
		if (!um || !(um->pm = mapset__new(r->pid)) ||
		    htab__add(u->maps, h, (uintptr_t)(uint32_t)r->pid, um)) {
			if (um)
				mapset__free(um->pm);
			free(um);
			return -ENOMEM;
		}
	}
	if (um->pm->n == um->cap) {
		size_t cap = um->cap ? um->cap * 2 : 64;
		struct mapping *v = realloc(um->pm->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		um->pm->v = v;
		um->cap = cap;
	}
	snprintf(m.build_id, sizeof(m.build_id), "%s", r->build_id);
	if (!strncmp(r->path, "[anon", 5)) {
		m.flags = MAPPING_ANON;	/* JIT code: frame pointers, no file */
	} else if (r->path[0] == '/') {
		mod = umod_of(u, r->path, r->build_id);
		if (!mod)
			return -ENOMEM;
		m.dev = 1;
		m.ino = mod->id;
	}
	m.path = strdup(r->path);
	if (!m.path)
		return -ENOMEM;
	um->pm->v[um->pm->n++] = m;
	um->sorted = false;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int hd_ustacks__take(struct hd_ustacks *u, const struct record *r)
{
	const struct rec_ustack *us = &r->us;
	size_t len = sizeof(*u->us) + us->size;

	if (u->held)
		u->st.unmatched++;
	u->held = false;
	u->st.records++;
	if (us->version != REC_USTACK_VERSION) {
		u->st.version++;
		return 0;
	}
	/* This build's architecture, or the other's (unwind/otherarch.h); no third. */
	u->other = !strcmp(us->arch, other_arch_name) && us->nregs == other_arch_nregs;
	if (!u->other && (strcmp(us->arch, HS_ARCH_NAME) || us->nregs != HS_UREG__MAX)) {
		u->st.other_arch++;
		return 0;
	}
	if (u->other && !u->ouw &&
	    !(u->ouw = other_unwinder__new(&(struct cfi_src){ .open = umod_open,
								.ctx = &u->src[1] })))
		return -ENOMEM;
	if (len > u->cap) {
		struct hs_user_stack *p = realloc(u->us, len);

		if (!p)
			return -ENOMEM;
		u->us = p;
		u->cap = len;
	}
	memset(u->us, 0, sizeof(*u->us));
	if (records__ustack_bytes(r, u->us->data, us->size)) {
		u->st.bad++;
		return 0;
	}
	memcpy(u->regs, us->regs, us->nregs * sizeof(*u->regs));
	if (!u->other)
		memcpy(u->us->regs, us->regs, sizeof(u->us->regs));
	u->us->size = us->size;
	u->us->want = us->want;
	u->us->skip = us->skip;
	u->us->holes = us->holes;
	u->len = len;
	u->pid = r->pid;
	u->ptr = r->ptr;
	u->frames = us->frames;
	u->held = true;
	return 0;
}

/*
 * The held record's process's mappings, sorted by start (mapset__find's
 * binary search; mappings that overlap, which a log written by hand may
 * have, make some addresses found in neither, never a fault).
 */
static const struct mapset *walk_maps(void *ctx, bool stale)
{
	const struct hd_ustacks *u = ctx;
	struct umaps *um;

	(void)stale;	/* a dump's mappings are all there are */
	um = u->maps ? htab__find(u->maps, htab_hash2((uint32_t)u->pid, 0),
				  (uintptr_t)(uint32_t)u->pid) : NULL;
	if (!um)
		return NULL;
	if (!um->sorted) {
		qsort(um->pm->v, um->pm->n, sizeof(*um->pm->v), by_start);
		mapset__touch(um->pm);
		um->sorted = true;
	}
	return um->pm;
}

void hd_ustacks__apply(struct hd_ustacks *u, int pid, uint64_t ptr, uint64_t *frames,
		       uint32_t *depth, uint32_t *flags)
{
	const uint32_t cuts = STACK_TRUNCATED | STACK_FAULT;
	struct unwind_req rq = { .pid = pid, .maps = walk_maps, .ctx = u, .us = u->us,
				 .len = u->len, .frames = u->out, .max = REC_MAX_DEPTH };
	struct unwind_res rs;
	uint32_t k, n, off_flags;
	bool on_whole, off_whole, appended;

	if (!u->held)
		return;
	if (u->pid != pid || u->ptr != ptr) {
		u->st.unmatched++;
		u->held = false;
		return;
	}
	u->held = false;
	u->st.applied++;
	if (u->other) {
		u->st.foreign++;
		rs.n = other_unwinder__run(u->ouw, pid, walk_maps, u, u->regs, u->us->size,
					   u->us->want, u->us->skip, u->us->holes, u->us->data,
					   u->out, REC_MAX_DEPTH, &rs.flags);
	} else {
		unwind__run(u->uw, &rq, &rs);
		free(rs.built);
	}
	if (rs.n <= 0) {
		u->st.bad++;
		return;
	}
	n = (uint32_t)rs.n;
	k = u->frames < *depth ? u->frames : *depth;
	/* Frames after the unwound ones (a thread's creator) follow a whole stack only. */
	appended = *depth > k;
	on_whole = appended || !(*flags & cuts);
	off_whole = !rs.flags;
	off_flags = (rs.flags & (UNWIND_CUT | UNWIND_DEPTH) ? STACK_TRUNCATED : 0) |
		    (rs.flags & UNWIND_FAULT ? STACK_FAULT : 0);
	if (n == k && on_whole == off_whole && !memcmp(u->out, frames, k * sizeof(*frames))) {
		u->st.same++;
		return;
	}
	/* Ending sooner, or cut where the online walk was whole: the online frames stay. */
	if (n < k || (on_whole && !off_whole) || (appended && !off_whole)) {
		u->st.kept_online++;
		return;
	}
	if (n > k || (off_whole && !on_whole))
		u->st.further++;
	else
		u->st.differ++;
	/* The creator's frames after the offline ones, REC_MAX_DEPTH at most. */
	if (appended) {
		uint32_t rest = *depth - k;

		if (n + rest > REC_MAX_DEPTH) {
			rest = REC_MAX_DEPTH - n;
			*flags |= STACK_TRUNCATED;
		}
		memmove(frames + n, frames + k, rest * sizeof(*frames));
		*depth = n + rest;
	} else {
		*depth = n;
		*flags = (*flags & ~cuts) | off_flags;
	}
	memcpy(frames, u->out, n * sizeof(*frames));
}

void hd_ustacks__stats(const struct hd_ustacks *u, struct hd_ustacks_stats *st)
{
	*st = u->st;
}

void hd_ustacks__report(const struct hd_ustacks *u, FILE *out)
{
	const struct hd_ustacks_stats *s = &u->st;

	if (!s->records)
		return;
	flog(out, "offline unwinding: %" PRIu64 " ustack records, %" PRIu64 " met their block: "
	     "%" PRIu64 " the online frames exactly, %" PRIu64 " further than online (more "
	     "frames, or whole where online was cut), %" PRIu64 " other frames as deep, %" PRIu64
	     " ending sooner than online (the online frames kept); modules: %" PRIu64
	     " looked for, %" PRIu64 " not found here, %" PRIu64 " with a separate debug file's "
	     "CFI%s", s->records, s->applied, s->same, s->further, s->differ, s->kept_online,
	     s->modules, s->modules_missing, s->debug_files,
	     s->foreign ? " (the other architecture's unwinder: its records)" : "");
	if (s->bad || s->version || s->other_arch || s->unmatched)
		flog(out, "offline unwinding: NOT USED: %" PRIu64 " ustack records (%" PRIu64
		     " malformed, %" PRIu64 " of a version other than %d, %" PRIu64 " of an "
		     "architecture neither %s nor %s, %" PRIu64 " not before their block's live "
		     "record): those blocks keep their online frames",
		     s->bad + s->version + s->other_arch + s->unmatched, s->bad, s->version,
		     REC_USTACK_VERSION, s->other_arch, HS_ARCH_NAME, other_arch_name, s->unmatched);
	for (size_t i = 0; i < u->nmods; i++) {
		const struct umod *m = u->byid[i];

		if (m->tried && !m->found)
			flog(out, "offline unwinding: %s (build ID %s): %s: give --sysroot, "
			     "--debug-dir DIR (DIR/.build-id/xx/rest) or DEBUGINFOD_URLS", m->path,
			     m->build_id, sym_status_str(m->why));
	}
}

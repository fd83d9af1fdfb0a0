// SPDX-License-Identifier: MIT
/*
 * jitdump.c - a jitdump's records taken as the file grows (see
 * jitdump.h; format: perf's tools/perf/util/jitdump.h and the spec,
 * tools/perf/Documentation/jitdump-specification.txt).
 *
 * The code's ranges and names go into a perf_map (perfmap.h) used as a
 * table only: its painter's sweep already names an address by the newest
 * range over it, which is the rule here too (a LOAD or MOVE taken later
 * is newer). Each LOAD's debug entries are kept in a table of their own
 * by the code's id, as offsets into the code (a MOVE shares them), their
 * file names interned. A DEBUG_INFO record waits for the LOAD of its
 * code_addr, which perf's spec puts right after it.
 */
#include <byteswap.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "jitdump.h"
#include "perfmap.h"

enum { REC_LOAD = 0, REC_MOVE = 1, REC_DEBUG = 2 };

#define PREFIX		16		/* id, total_size, timestamp */
#define LOAD_FIXED	(PREFIX + 40)	/* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_SIZE	(PREFIX + 48)	/* ... old and new code_addr, code_size, code_index */
#define DEBUG_FIXED	(PREFIX + 16)	/* code_addr, nr_entry */
#define ENTRY_MIN	17		/* addr, lineno, discrim, a NUL */
#define USER_END	(1ULL << 62)	/* no user-space code at or above */

/* One debug entry: the code from @off (bytes into it) on is @file:@line. */
struct dline {
	uint64_t off;
	const char *file;
	uint32_t line;
};

struct dtab {
	uint32_t n, refs;	/* refs: the codes sharing it (a LOAD and its MOVEs) */
	struct dline v[];
};

struct jit_dump {
	struct perf_map *codes;		/* ranges and names, by id */
	struct dtab **dbg;		/* by id, NULL: none */
	size_t ndbg;
	struct htab *by_index;		/* code_index -> id + 1 */
	struct htab *files;		/* interned file names */
	struct dtab *pending;		/* a DEBUG_INFO waiting for its LOAD ... */
	uint64_t pending_addr;		/* ... of this code_addr */
	uint64_t off;			/* the next record's offset; 0: no header yet */
	uint64_t seen;			/* the largest size the file had */
	uint8_t *buf;			/* a record's bytes */
	size_t cap;
	struct jit_dump_stats st;
	char why[160];
};

/* Little-endian words, as x86-64 and arm64 write them (a big-endian file is refused). */
static uint32_t u32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t u64_at(const uint8_t *p)
{
	return (uint64_t)u32_at(p) | (uint64_t)u32_at(p + 4) << 32;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static bool str_equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	(void)ctx;
	return !strcmp((const char *)stored, (const char *)probe);
}

static void dtab_put(struct dtab *d)
{
	if (d && !--d->refs)
		free(d);
}

static void drop(struct jit_dump *jd)
{
	size_t pos = 0;
	char *s;

	perf_map__free(jd->codes);
	for (size_t i = 0; i < jd->ndbg; i++)
		dtab_put(jd->dbg[i]);
	free(jd->dbg);
	dtab_put(jd->pending);
	htab__free(jd->by_index);
	while (jd->files && (s = htab__next(jd->files, &pos, NULL)))
		free(s);
	htab__free(jd->files);
	jd->dbg = NULL;
	jd->ndbg = 0;
	jd->pending = NULL;
}

/* Everything taken forgotten; 0 or -ENOMEM (then @jd holds nothing). */
static int reset(struct jit_dump *jd)
{
	drop(jd);
	jd->off = jd->seen = 0;
	jd->st.state = JIT_DUMP_WAIT;
	jd->why[0] = '\0';
	jd->codes = perf_map__new(0);
	jd->by_index = htab__new(64, NULL, NULL);
	jd->files = htab__new(16, str_equal, NULL);
	return jd->codes && jd->by_index && jd->files ? 0 : -ENOMEM;
}

struct jit_dump *jit_dump__new(void)
{
	struct jit_dump *jd = calloc(1, sizeof(*jd));

	if (jd && reset(jd)) {
		jit_dump__free(jd);
		return NULL;
	}
	return jd;
}

void jit_dump__free(struct jit_dump *jd)
{
	if (!jd)
		return;
	drop(jd);
	free(jd->buf);
	free(jd);
}

__attribute__((format(printf, 3, 4)))
static int refuse(struct jit_dump *jd, enum jit_dump_state state, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(jd->why, sizeof(jd->why), fmt, ap);
	va_end(ap);
	jd->st.state = state;
	return -EPROTO;
}

/* @n bytes at @off into jd->buf: 0, or the reader's error. */
static int read_at(struct jit_dump *jd, jit_dump_read_fn rd, void *ctx, uint64_t off, size_t n)
{
	if (n > jd->cap) {
		uint8_t *b = realloc(jd->buf, n);

		if (!b)
			return -ENOMEM;
		jd->buf = b;
		jd->cap = n;
	}
	return rd(ctx, off, jd->buf, n) ? -EAGAIN : 0;
}

/* The header: 1 taken, 0 not whole yet, -EPROTO refused, -ENOMEM. */
static int header(struct jit_dump *jd, jit_dump_read_fn rd, void *ctx, uint64_t size)
{
	uint32_t magic, version, total;
	int err;

	if (size < JIT_DUMP_HEADER_SIZE) {
		snprintf(jd->why, sizeof(jd->why), "its header is not whole (%llu bytes)",
			 (unsigned long long)size);
		return 0;
	}
	err = read_at(jd, rd, ctx, 0, JIT_DUMP_HEADER_SIZE);
	if (err)
		return err == -ENOMEM ? err : 0;
	magic = u32_at(jd->buf);
	version = u32_at(jd->buf + 4);
	total = u32_at(jd->buf + 8);
	if (magic == bswap_32(JIT_DUMP_MAGIC))
		return refuse(jd, JIT_DUMP_FOREIGN, "it is in the other byte order (written on "
			      "another machine?)");
	if (magic != JIT_DUMP_MAGIC)
		return refuse(jd, JIT_DUMP_NOT_JITDUMP, "it is not a jitdump (magic %#x, not "
			      "\"JiTD\")", magic);
	if (version != JIT_DUMP_VERSION)
		return refuse(jd, JIT_DUMP_BAD_VERSION, "its version is %u, not %u", version,
			      JIT_DUMP_VERSION);
	if (total < JIT_DUMP_HEADER_SIZE || total > JIT_DUMP_HEADER_MAX)
		return refuse(jd, JIT_DUMP_CORRUPT, "its header says it is %u bytes", total);
	if (size < total)
		return 0;
	jd->off = total;
	jd->st.state = JIT_DUMP_OK;
	jd->why[0] = '\0';
	return 1;
}

static int set_dbg(struct jit_dump *jd, uint32_t id, struct dtab *d)
{
	if (id >= jd->ndbg) {
		size_t n = id + 1 > 2 * jd->ndbg ? id + 1 : 2 * jd->ndbg;
		struct dtab **v = realloc(jd->dbg, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + jd->ndbg, 0, (n - jd->ndbg) * sizeof(*v));
		jd->dbg = v;
		jd->ndbg = n;
	}
	dtab_put(jd->dbg[id]);
	jd->dbg[id] = d;
	if (d)
		d->refs++;
	return 0;
}

/* A range's code_index now names code @id. */
static int index_code(struct jit_dump *jd, uint64_t index, int64_t id)
{
	uint64_t h = htab_hash2(index, 0);

	htab__delete(jd->by_index, h, (uintptr_t)index);
	return htab__add(jd->by_index, h, (uintptr_t)index, (void *)(uintptr_t)(id + 1));
}

/* A LOAD: 1 taken, 0 skipped, -ENOMEM. */
static int load(struct jit_dump *jd, jit_dump_read_fn rd, void *ctx, uint32_t total)
{
	uint64_t start, size, index, room;
	struct dtab *d = jd->pending;
	size_t nlen;
	int64_t id;
	int err;

	jd->pending = NULL;
	if (total < LOAD_FIXED + 1)
		goto bad;
	err = read_at(jd, rd, ctx, jd->off, LOAD_FIXED);
	if (err)
		goto out;

	start = u64_at(jd->buf + 32);
	size = u64_at(jd->buf + 40);
	index = u64_at(jd->buf + 48);
	/* The name, then the code's bytes: a NUL at least. */
	if (!size || size > total - LOAD_FIXED - 1 || start + size < start ||
	    start + size > USER_END)
		goto bad;
	room = total - LOAD_FIXED - size;
	nlen = room < JIT_DUMP_NAME_MAX ? (size_t)room : JIT_DUMP_NAME_MAX;
	err = read_at(jd, rd, ctx, jd->off + LOAD_FIXED, nlen);
	if (err)
		goto out;
	nlen = strnlen((const char *)jd->buf, nlen);
	id = perf_map__add(jd->codes, start, start + size, (const char *)jd->buf, nlen);
	jd->st.capped |= id == -ENOSPC;
	err = id == -ENOSPC ? 0 : id < 0 ? (int)id : index_code(jd, index, id);
	if (id < 0 || err)
		goto out;
	jd->st.loads++;
	if (d && jd->pending_addr == start) {
		/* Entries past the code name none of it. */
		while (d->n && d->v[d->n - 1].off >= size)
			d->n--;
		if (set_dbg(jd, (uint32_t)id, d)) {
			err = -ENOMEM;
			goto out;
		}
		jd->st.debug++;
		jd->st.lines += d->n;
		dtab_put(d);
		d = NULL;
	}
	err = 1;
	goto out;
bad:
	jd->st.bad++;
	err = 0;
out:
	if (err < 0) {
		jd->pending = d;	/* the LOAD is read again later: it still waits */
		return err;
	}
	if (d)
		jd->st.bad++;	/* a DEBUG_INFO its LOAD did not follow */
	dtab_put(d);
	return err;
}

/* A MOVE: 1 taken, 0 skipped, -ENOMEM. */
static int move(struct jit_dump *jd, jit_dump_read_fn rd, void *ctx, uint32_t total)
{
	uint64_t to, size, index;
	struct perf_map_entry e;
	uintptr_t id;
	int64_t nid;
	int err;

	if (total < MOVE_SIZE)
		goto bad;
	err = read_at(jd, rd, ctx, jd->off, MOVE_SIZE);
	if (err)
		return err;
	to = u64_at(jd->buf + 40);
	size = u64_at(jd->buf + 48);
	index = u64_at(jd->buf + 56);
	id = (uintptr_t)htab__find(jd->by_index, htab_hash2(index, 0), (uintptr_t)index);
	if (!id || perf_map__entry(jd->codes, (uint32_t)(id - 1), &e))
		goto bad;
	if (!size)
		size = e.end - e.start;
	if (to + size < to || to + size > USER_END)
		goto bad;
	nid = perf_map__add(jd->codes, to, to + size, e.name, strlen(e.name));
	jd->st.capped |= nid == -ENOSPC;
	if (nid < 0)
		return nid == -ENOSPC ? 0 : (int)nid;
	if (index_code(jd, index, nid) ||
	    (id - 1 < jd->ndbg && jd->dbg[id - 1] && set_dbg(jd, (uint32_t)nid, jd->dbg[id - 1])))
		return -ENOMEM;
	jd->st.moves++;
	return 1;
bad:
	jd->st.bad++;
	return 0;
}

/* A file name kept once; NULL: no memory. */
static const char *intern(struct jit_dump *jd, const char *s, size_t len)
{
	char *k = strndup(s, len);
	uint64_t h;
	char *have;

	if (!k)
		return NULL;
	h = str_hash(k);
	have = htab__find(jd->files, h, (uintptr_t)k);
	if (have) {
		free(k);
		return have;
	}
	if (htab__add(jd->files, h, (uintptr_t)k, k)) {
		free(k);
		return NULL;
	}
	return k;
}

/* Is @s (@n bytes) text: UTF-8 (not overlong), no control characters? */
static bool is_text(const uint8_t *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k + 1) {
		k = s[i] < 0x80 ? 0 : s[i] >= 0xc2 && s[i] < 0xe0 ? 1 : s[i] >= 0xe0 && s[i] < 0xf0 ?
		    2 : s[i] >= 0xf0 && s[i] < 0xf5 ? 3 : 4;
		if (k == 4 || n - i <= k || (!k && (s[i] < 0x20 || s[i] == 0x7f)))
			return false;
		for (size_t c = 1; c <= k; c++)
			if ((s[i + c] & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static int by_off(const void *a, const void *b)
{
	const struct dline *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* A DEBUG_INFO, whole in jd->buf (@len bytes): pending; 0 or -ENOMEM. */
static int debug_info(struct jit_dump *jd, size_t len)
{
	const uint8_t *p = jd->buf + DEBUG_FIXED, *end = jd->buf + len;
	uint64_t code = u64_at(jd->buf + PREFIX), nr = u64_at(jd->buf + PREFIX + 8);
	const char *file = NULL;
	struct dtab *d;
	uint32_t k = 0;

	if (nr > (uint64_t)(end - p) / ENTRY_MIN) {
		jd->st.bad++;
		return 0;
	}
	if (jd->st.lines + nr > JIT_DUMP_MAX_LINES) {
		jd->st.capped = true;
		return 0;
	}
	d = malloc(sizeof(*d) + (size_t)nr * sizeof(d->v[0]));
	if (!d)
		return -ENOMEM;
	d->refs = 0;
	for (uint64_t i = 0; i < nr; i++) {
		const uint8_t *name = p + 16, *nul;
		uint64_t addr;
		int32_t line;
		size_t nlen;

		nul = end - p >= ENTRY_MIN ? memchr(name, 0, (size_t)(end - name)) : NULL;
		/* Not text: the record is not to be trusted (node 20 writes a
		 * long script path's name from freed memory, misframed after). */
		if (!nul || !is_text(name, (size_t)(nul - name) - (nul - name == 1 && *name == 0xff))) {
			free(d);
			jd->st.bad++;
			return 0;
		}
		addr = u64_at(p);
		line = (int32_t)u32_at(p + 8);
		nlen = (size_t)(nul - name);
		p = nul + 1;
		/* "\xff": the previous entry's file (the spec's repeated name). */
		if (!(nlen == 1 && name[0] == 0xff && file)) {
			file = intern(jd, (const char *)name,
				      nlen < JIT_DUMP_FILE_MAX ? nlen : JIT_DUMP_FILE_MAX);
			if (!file) {
				free(d);
				return -ENOMEM;
			}
		}
		/* perf's reading: the code sits at ELF text offset 0x40. */
		if (addr - code < JIT_DUMP_ELF_TEXT_OFFSET || addr < code)
			addr = code + JIT_DUMP_ELF_TEXT_OFFSET;
		d->v[k++] = (struct dline){ addr - code - JIT_DUMP_ELF_TEXT_OFFSET, file,
					    line > 0 ? (uint32_t)line : 0 };
	}
	/* In code order; of entries at one offset the last one written. */
	qsort(d->v, k, sizeof(d->v[0]), by_off);
	d->n = 0;
	for (uint32_t i = 0; i < k; i++) {
		if (d->n && d->v[d->n - 1].off == d->v[i].off)
			d->n--;
		d->v[d->n++] = d->v[i];
	}
	if (jd->pending)
		jd->st.bad++;
	dtab_put(jd->pending);
	jd->pending = d;
	d->refs = 1;
	jd->pending_addr = code;
	return 0;
}

/* The record of @total bytes at jd->off, whole in the file: 1 taken, 0, -ENOMEM. */
static int record(struct jit_dump *jd, jit_dump_read_fn rd, void *ctx, uint32_t id,
		  uint32_t total)
{
	int err;

	switch (id) {
	case REC_LOAD:
		return load(jd, rd, ctx, total);
	case REC_MOVE:
		return move(jd, rd, ctx, total);
	case REC_DEBUG:
		if (total < DEBUG_FIXED) {
			jd->st.bad++;
			return 0;
		}
		if (total > JIT_DUMP_RECORD_MAX) {
			jd->st.skipped++;
			return 0;
		}
		err = read_at(jd, rd, ctx, jd->off, total);
		return err ? err : debug_info(jd, total);
	default:
		return 0;	/* CLOSE, UNWINDING_INFO, what perf skips too */
	}
}

int jit_dump__parse(struct jit_dump *jd, jit_dump_read_fn rd, void *ctx, uint64_t size)
{
	int taken = 0, err;

	if (size < jd->seen) {
		/* Made shorter: another content, read from its start. */
		jd->st.resets++;
		if (reset(jd))
			return -ENOMEM;
	}
	jd->seen = size;
	if (jd->st.state != JIT_DUMP_WAIT && jd->st.state != JIT_DUMP_OK)
		return -EPROTO;
	if (!jd->off) {
		err = header(jd, rd, ctx, size);
		if (err <= 0)
			return err;
	}
	while (jd->off + PREFIX <= size && !jd->st.capped) {
		uint32_t id, total;

		if (jd->off >= JIT_DUMP_MAX_BYTES) {
			jd->st.capped = true;
			break;
		}
		err = read_at(jd, rd, ctx, jd->off, PREFIX);
		if (err == -ENOMEM)
			return err;
		if (err)
			break;
		id = u32_at(jd->buf);
		total = u32_at(jd->buf + 4);
		if (total < PREFIX)
			return refuse(jd, JIT_DUMP_CORRUPT, "a record at offset %llu says it is "
				      "%u bytes", (unsigned long long)jd->off, total);
		if (jd->off + total > size)
			break;	/* not whole yet: the writer's buffer holds the rest */
		err = record(jd, rd, ctx, id, total);
		if (err == -EAGAIN)
			break;		/* the reader failed: this record again next time */
		if (err < 0)
			return err;	/* no memory: the same */
		taken += err;
		jd->off += total;
		jd->st.bytes = jd->off;
	}
	return taken;
}

struct mem { const uint8_t *p; size_t len; };

static int mem_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct mem *m = ctx;

	if (off > m->len || n > m->len - off)
		return -EIO;
	memcpy(buf, m->p + off, n);
	return 0;
}

int jit_dump__feed(struct jit_dump *jd, const void *buf, size_t len)
{
	struct mem m = { buf, len };

	return jit_dump__parse(jd, mem_read, &m, len);
}

int jit_dump__find(const struct jit_dump *jd, uint64_t addr, struct jit_code *out)
{
	struct perf_map_entry e;
	const struct dtab *d;
	size_t lo = 0, hi;
	uint64_t off;

	if (perf_map__find(jd->codes, addr, &e))
		return -ENOENT;
	*out = (struct jit_code){ .start = e.start, .end = e.end, .name = e.name, .id = e.id,
				  .lstart = e.start, .lend = e.end };
	d = e.id < jd->ndbg ? jd->dbg[e.id] : NULL;
	if (!d || !d->n)
		return 0;
	/* The last entry at or before @addr. */
	off = addr - e.start;
	hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->v[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		out->lend = e.start + d->v[0].off;
		return 0;
	}
	out->lstart = e.start + d->v[lo - 1].off;
	out->lend = lo < d->n ? e.start + d->v[lo].off : e.end;
	out->file = d->v[lo - 1].file;
	out->line = d->v[lo - 1].line;
	out->lidx = (uint32_t)lo;
	return 0;
}

uint32_t jit_dump__count(const struct jit_dump *jd)
{
	return perf_map__count(jd->codes);
}

void jit_dump__stats(const struct jit_dump *jd, struct jit_dump_stats *st)
{
	*st = jd->st;
}

const char *jit_dump__why(const struct jit_dump *jd)
{
	return jd->why;
}

// SPDX-License-Identifier: MIT
/*
 * pycache.c - one process's code objects by address, each until its
 * death (see pycache.h), read through process_vm_readv(2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "htab.h"
#include "interp/python/pycache.h"
#include "interp/python/pylines.h"

/* Lines kept per code object: instruction index -> line, direct-mapped. */
#define LINE_MEMO 8

struct entry {
	uint64_t addr;
	struct py_code code;
	int memo_index[LINE_MEMO];
	int memo_line[LINE_MEMO];
	uint64_t memo_word[LINE_MEMO];
};

struct py_cache {
	pid_t pid;
	struct py_layout layout;
	uint64_t code_type;
	py_ahead_fn ahead;
	void *ctx;
	struct htab *codes;	/* address -> struct entry */
	struct py_cache_stats st;
};

static uint64_t addr_hash(uint64_t a)
{
	return htab_hash2(a, 0x70);
}

struct py_cache *py_cache__new(pid_t pid, const struct py_layout *l, uint64_t code_type,
			       py_ahead_fn ahead, void *ctx)
{
	struct py_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->pid = pid;
	c->layout = *l;
	c->code_type = code_type;
	c->ahead = ahead;
	c->ctx = ctx;
	c->codes = htab__new(64, NULL, NULL);
	if (!c->codes) {
		free(c);
		return NULL;
	}
	return c;
}

static void entry_free(struct entry *e)
{
	py_code__fini(&e->code);
	free(e);
}

void py_cache__free(struct py_cache *c)
{
	struct entry *e;
	size_t pos = 0;

	if (!c)
		return;
	while ((e = htab__next(c->codes, &pos, NULL)))
		entry_free(e);
	htab__free(c->codes);
	free(c);
}

/* py_read_fn: the process's memory. */
static int vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct py_cache *c = ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(c->pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

int py_cache__from_look(const struct hs_interp_code *look, size_t len, struct py_code *c)
{
	memset(c, 0, sizeof(*c));
	if (len < sizeof(*look) || look->table_len > len - sizeof(*look) ||
	    look->table_len > HS_ICODE_TABLE || look->name_len > HS_ICODE_NAME ||
	    look->file_len > HS_ICODE_FILE || !look->name_kind || !look->file_kind ||
	    look->name_len % look->name_kind || look->file_len % look->file_kind)
		return -EINVAL;
	c->name = py_str__utf8(look->name, look->name_len / look->name_kind, look->name_kind);
	c->file = py_str__utf8(look->file, look->file_len / look->file_kind, look->file_kind);
	c->table = malloc(look->table_len ? look->table_len : 1);
	if (!c->name || !c->file || !c->table) {
		py_code__fini(c);
		return -ENOMEM;
	}
	memcpy(c->table, look->table, look->table_len);
	/* A table cut at HS_ICODE_TABLE: lines past it are not known (PY_LINE_BAD). */
	c->table_len = look->table_len;
	c->firstline = look->firstline;
	c->firsttraceable = look->aux;
	return 0;
}

/*
 * The last look of @addr's first death after @pos, into @code: true if
 * one. *@live: the memory is still the record's image.
 */
static bool from_death(struct py_cache *c, uint64_t addr, uint64_t pos, struct py_code *code,
		       bool *live)
{
	const struct hs_interp_code *look;
	size_t len;

	*live = true;
	look = c->ahead ? c->ahead(c->ctx, c->pid, addr, pos, &len, live) : NULL;
	return look && !py_cache__from_look(look, len, code);
}

/* Code object @addr for a record at @pos, not cached: steps 2 to 4. */
static struct entry *find(struct py_cache *c, uint64_t addr, uint64_t pos)
{
	struct entry *e = calloc(1, sizeof(*e));
	bool live;
	int err;

	if (!e)
		return NULL;
	e->addr = addr;
	for (int i = 0; i < LINE_MEMO; i++)
		e->memo_index[i] = -1;
	if (from_death(c, addr, pos, &e->code, &live)) {
		c->st.from_death++;
	} else if (!live) {
		/* An exec replaced the image the record saw: nothing to read. */
		c->st.gone++;
		free(e);
		return NULL;
	} else {
		struct py_code now;

		err = py_code__read(&c->layout, vm_read, c, addr, c->code_type, &now);
		/* A death before the read is ahead in the ring now: its look wins. */
		if (from_death(c, addr, pos, &e->code, &live)) {
			if (!err)
				py_code__fini(&now);
			c->st.live_lost++;
		} else if (err || !live) {
			if (!err)
				py_code__fini(&now);
			c->st.gone++;
			free(e);
			return NULL;
		} else {
			e->code = now;
			c->st.reads++;
		}
	}
	if (htab__add(c->codes, addr_hash(addr), addr, e)) {
		entry_free(e);
		return NULL;
	}
	return e;
}

void py_cache__name(struct py_cache *c, uint64_t addr, int index, uint64_t pos,
		    struct py_frame_name *f)
{
	struct entry *e = htab__find(c->codes, addr_hash(addr), addr);
	unsigned int slot;
	int line;

	memset(f, 0, sizeof(*f));
	if (e)
		c->st.hits++;
	else
		e = find(c, addr, pos);
	if (!e) {
		f->gone = true;
		f->name = "<code gone>";
		f->file = "";
		return;
	}
	f->name = e->code.name;
	f->file = e->code.file;
	if (index < 0 || (e->code.firsttraceable >= 0 && index < e->code.firsttraceable)) {
		f->incomplete = true;
		return;
	}
	slot = (unsigned int)index % LINE_MEMO;
	f->memo = &e->memo_word[slot];
	if (e->memo_index[slot] == index) {
		f->line = e->memo_line[slot];
		return;
	}
	line = py_code__line(&e->code, index);
	f->line = line > 0 ? line : 0;
	e->memo_index[slot] = index;
	e->memo_line[slot] = f->line;
	e->memo_word[slot] = 0;
}

void py_cache__gone(struct py_cache *c, uint64_t addr)
{
	struct entry *e = htab__delete(c->codes, addr_hash(addr), addr);

	if (e)
		entry_free(e);
}

void py_cache__stats(const struct py_cache *c, struct py_cache_stats *st)
{
	*st = c->st;
	st->entries = htab__count(c->codes);
}

// SPDX-License-Identifier: MIT
/*
 * plpycode.c - the code objects heapsnoop --preload names Python frames
 * by (see interp/plread.h, plpython_int.h): each from the collector's record
 * of it (livetable.h, LT_PY_CODEREC: its name, file and location table
 * copied into the table while it lived), else read from the process
 * (process_vm_readv, user/interp/python/pycode.c) while its pidfd says it
 * runs, and only if, after its name, file and location table are read,
 * its head still has the type PyCode_Type and the fingerprint the
 * collector saw (livetable.h, lt_py_fingerprint(): its name's, file's
 * and table's addresses, first line, size). The code object holds its
 * strings, so a fingerprint that still agrees after the reads says they
 * were its own. Anything else is "<code gone>", never another's name.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "htab.h"
#include "plpython_int.h"

bool plpy_code__equal(uintptr_t stored, uintptr_t probe, void *ctx)
{
	const struct code *c = (const struct code *)stored;
	const struct code_key *p = (const struct code_key *)probe;

	(void)ctx;
	return c->addr == p->addr && c->fp == p->fp;
}

static bool running(const struct plread_image *pi)
{
	struct pollfd p = { pi->pidfd, POLLIN, 0 };

	return !pi->dead && !(poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)));
}

static int vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct plread_image *pi = ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(pi->pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

static uint64_t word_at(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* Up to 8 bytes at @addr as lt_py_bytes8() makes them; 0 if unreadable. */
static uint64_t bytes8_at(struct plread_image *pi, uint64_t addr, uint64_t n)
{
	unsigned char b[8];

	n = n < 8 ? n : 8;
	return vm_read(pi, addr, b, n) ? 0 : lt_py_bytes8(b, n);
}

/* The last 8 bytes of the compact str @s's characters, as pywalk.c's str_tail(). */
static uint64_t str_tail(struct plread_image *pi, uint64_t s)
{
	const struct py_layout *l = &plpy_py_of(pi)->img.layout;
	uint32_t state;
	uint64_t n;

	if (!s || (s & 7) || vm_read(pi, s + l->str_state, &state, sizeof(state)))
		return 0;
	state >>= l->str_state_shift;
	if (!(state & PY_STR_COMPACT) || vm_read(pi, s + l->str_length, &n, sizeof(n)))
		return 0;
	n *= PY_STR_KIND(state);
	s += (state & PY_STR_ASCII) ? l->str_ascii : l->str_compact;
	return n >= 8 ? bytes8_at(pi, s + n - 8, 8) : bytes8_at(pi, s, n);
}

/* Is the code object at @addr, read now, the one of fingerprint @fp? */
static bool still_it(struct plread_image *pi, uint64_t addr, uint32_t fp)
{
	const struct py_layout *l = &plpy_py_of(pi)->img.layout;
	struct lt_py_code_id id;
	uint8_t head[256];

	if (l->co_code > sizeof(head) || vm_read(pi, addr, head, l->co_code) ||
	    word_at(head, l->ob_type) != plpy_py_of(pi)->code_type)
		return false;
	id = (struct lt_py_code_id){ .qualname = word_at(head, l->co_qualname),
		.file = word_at(head, l->co_filename), .table = word_at(head, l->co_linetable),
		.firstline = (uint32_t)word_at(head, l->co_firstlineno),
		.units = word_at(head, l->bytes_size) };
	id.name_tail = str_tail(pi, id.qualname);
	id.file_tail = str_tail(pi, id.file);
	if (id.table && !(id.table & 7) &&
	    !vm_read(pi, id.table + l->bytes_size, &id.table_len, sizeof(id.table_len)))
		id.table_head = bytes8_at(pi, id.table + l->bytes_data, id.table_len);
	return lt_py_fingerprint(&id) == fp;
}

/* The code object @addr of fingerprint @fp: read once, kept (NULL: no memory). */
struct code *plpy_code__of(struct plread_image *pi, uint64_t addr, uint32_t fp)
{
	struct code_key p = { addr, fp };
	uint64_t hash = htab_hash2(addr, fp);
	struct code *c = htab__find(plpy_py_of(pi)->codes, hash, (uintptr_t)&p);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->addr = addr;
	c->fp = fp;
	if (running(pi) &&
	    !py_code__read(&plpy_py_of(pi)->img.layout, vm_read, pi, addr, plpy_py_of(pi)->code_type, &c->c)) {
		c->ok = still_it(pi, addr, fp);
		if (!c->ok)
			py_code__fini(&c->c);
		pi->c->reads++;
	}
	if (htab__add(plpy_py_of(pi)->codes, hash, (uintptr_t)c, c)) {
		py_code__fini(&c->c);
		free(c);
		return NULL;
	}
	return c;
}

/*
 * A code object's record (livetable.h, LT_PY_CODEREC: the collector's
 * copy of its name, file and location table), @w[@n] copied out of the
 * table, kept unless one of that code object is kept already.
 */
void plpy_code__record(struct plread_image *pi, const uint64_t *w, uint32_t n)
{
	uint32_t nn = w[4] & 0xffffff, nk = (w[4] >> 24) & 0xff;
	uint32_t fn = (w[4] >> 32) & 0xffffff, fk = (uint32_t)(w[4] >> 56);
	uint64_t keep = w[3] >> 32, nb = (uint64_t)nn * nk, fb = (uint64_t)fn * fk;
	struct code_key p = { w[1], (uint32_t)w[2] };
	uint64_t hash = htab_hash2(p.addr, p.fp);
	const char *b = (const char *)(w + LT_PY_CODEREC_WORDS);
	struct code *c;

	if ((nk != 1 && nk != 2 && nk != 4) || (fk != 1 && fk != 2 && fk != 4) ||
	    nb + fb + keep > (uint64_t)(n - LT_PY_CODEREC_WORDS) * 8 ||
	    htab__find(plpy_py_of(pi)->codes, hash, (uintptr_t)&p))
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->addr = p.addr;
	c->fp = p.fp;
	c->c.firstline = (int)(w[2] >> 32);
	c->c.firsttraceable = (int32_t)(uint32_t)w[3];
	c->c.name = py_str__utf8(b, nn, nk);
	c->c.file = py_str__utf8(b + nb, fn, fk);
	c->c.table = malloc(keep ? keep : 1);
	c->c.table_len = keep;
	c->ok = c->c.name && c->c.file && c->c.table && c->c.firstline >= 0;
	if (c->c.table)
		memcpy(c->c.table, b + nb + fb, keep);
	if (!c->ok || htab__add(plpy_py_of(pi)->codes, hash, (uintptr_t)c, c)) {
		py_code__fini(&c->c);
		free(c);
		return;
	}
	pi->c->records++;
}

void plpy_code__free_all(struct plread_image *pi)
{
	size_t pos = 0;
	struct code *c;

	if (!plpy_py_of(pi)->codes)
		return;
	while ((c = htab__next(plpy_py_of(pi)->codes, &pos, NULL))) {
		py_code__fini(&c->c);
		free(c);
	}
}

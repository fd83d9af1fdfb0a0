// SPDX-License-Identifier: MIT
/*
 * pycode.c - a CPython code object's name, file and lines through a
 * reader (see pycode.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pycode.h"
#include "pylines.h"

/* Append code point @cp as UTF-8 at @o; returns the bytes written. */
static size_t put_utf8(char *o, uint32_t cp)
{
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

char *py_str__utf8(const void *data, size_t n, unsigned int kind)
{
	const uint8_t *p = data;
	size_t o = 0;
	char *s;

	if ((kind != 1 && kind != 2 && kind != 4) || n > SIZE_MAX / 4 - 1)
		return NULL;
	s = malloc(n * 4 + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t cp;

		if (kind == 1) {
			cp = p[i];
		} else if (kind == 2) {
			uint16_t v;

			memcpy(&v, p + 2 * i, 2);
			cp = v;
		} else {
			memcpy(&cp, p + 4 * i, 4);
		}
		o += put_utf8(s + o, cp);
	}
	s[o] = '\0';
	return s;
}

int py_str__read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr,
		 size_t max, char **out)
{
	uint32_t state, kind;
	uint64_t len, data;
	void *raw;
	int err;

	*out = NULL;
	if (!addr)
		return -EFAULT;
	err = rd(ctx, addr + l->str_length, &len, sizeof(len));
	if (!err)
		err = rd(ctx, addr + l->str_state, &state, sizeof(state));
	if (err)
		return err;
	state >>= l->str_state_shift;
	kind = PY_STR_KIND(state);
	/* Only compact strings: what code objects' names and files are. */
	if (!(state & PY_STR_COMPACT) || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state & PY_STR_ASCII) && kind != 1) || len > (1u << 30))
		return -ESTALE;
	if (len > max)
		len = max;
	data = addr + ((state & PY_STR_ASCII) ? l->str_ascii : l->str_compact);
	raw = malloc(len * kind + 1);
	if (!raw)
		return -ENOMEM;
	err = rd(ctx, data, raw, len * kind);
	if (!err) {
		*out = py_str__utf8(raw, len, kind);
		if (!*out)
			err = -ENOMEM;
	}
	free(raw);
	return err;
}

/* An int field of a code object read whole from @co (its first bytes). */
static int32_t int_at(const uint8_t *co, uint32_t off)
{
	int32_t v;

	memcpy(&v, co + off, sizeof(v));
	return v;
}

static uint64_t ptr_at(const uint8_t *co, uint32_t off)
{
	uint64_t v;

	memcpy(&v, co + off, sizeof(v));
	return v;
}

int py_code__read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr,
		  uint64_t code_type, struct py_code *c)
{
	uint8_t co[256];
	uint64_t table, tlen;
	size_t need = l->co_code;
	int err;

	memset(c, 0, sizeof(*c));
	if (!addr || need > sizeof(co))
		return -EFAULT;
	err = rd(ctx, addr, co, need);
	if (err)
		return err;
	if (ptr_at(co, l->ob_type) != code_type)
		return -ESTALE;
	c->firstline = int_at(co, l->co_firstlineno);
	c->firsttraceable = l->co_firsttraceable >= 0 ? int_at(co, (uint32_t)l->co_firsttraceable) : -1;
	table = ptr_at(co, l->co_linetable);
	if (c->firstline < 0 || !table)
		return -ESTALE;
	err = py_str__read(l, rd, ctx, ptr_at(co, l->co_qualname), PY_NAME_MAX, &c->name);
	if (!err)
		err = py_str__read(l, rd, ctx, ptr_at(co, l->co_filename), PY_FILE_MAX, &c->file);
	if (!err)
		err = rd(ctx, table + l->bytes_size, &tlen, sizeof(tlen));
	if (!err && tlen > PY_TABLE_MAX)
		err = -ESTALE;
	if (!err) {
		c->table = malloc(tlen ? tlen : 1);
		c->table_len = tlen;
		err = c->table ? rd(ctx, table + l->bytes_data, c->table, tlen) : -ENOMEM;
	}
	if (err) {
		py_code__fini(c);
		return err;
	}
	return 0;
}

void py_code__fini(struct py_code *c)
{
	free(c->name);
	free(c->file);
	free(c->table);
	memset(c, 0, sizeof(*c));
}

int py_code__line(const struct py_code *c, int index)
{
	return py_lines__at(c->table, c->table_len, c->firstline, index);
}

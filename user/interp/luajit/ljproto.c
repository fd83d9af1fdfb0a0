// SPDX-License-Identifier: MIT
/*
 * ljproto.c - a LuaJIT prototype read whole, its lines, chunk and call
 * names (see ljproto.h). The rules are lj_debug.c's (lj_debug_line,
 * debug_varname, lj_debug_uvname, lj_debug_slotname, lj_debug_funcname,
 * lj_debug_shortname), the bytecode's modes lj_bc.h's BCDEF of 2.1 (97
 * instructions), written here anew as a table of what a name needs: an
 * instruction's A operand kind and its metamethod.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/luajit/ljproto.h"

static uint64_t u64_at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const uint8_t *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* A pointer into the block at @addr of @size bytes: its offset, or -1 (NULL: -2). */
static int64_t inside(uint64_t ptr, uint64_t addr, uint32_t size)
{
	if (!ptr)
		return -2;
	return ptr >= addr && ptr < addr + size ? (int64_t)(ptr - addr) : -1;
}

/* A GCstr's bytes at @addr, malloc'ed and NUL-terminated in *@out (LUA_STR_MAX at most). */
static int lj_str_read(const struct lua_reader *rd, uint64_t addr, char **out)
{
	uint8_t h[24];
	uint32_t len;
	char *s;

	if (!addr || rd->read(rd->ctx, addr, h, sizeof(h)))
		return -EFAULT;
	if (h[9] != LJ_GCT_STR)
		return -ESTALE;
	len = u32_at(h, 20);
	if (len > LUA_STR_MAX)
		len = LUA_STR_MAX;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	if (len && rd->read(rd->ctx, addr + 24, s, len)) {
		free(s);
		return -EFAULT;
	}
	s[len] = 0;
	*out = s;
	return 0;
}

/* lj_debug_shortname, but a file's name (@) not cut: it says more whole. */
static void shortname(const char *src, char *out, size_t cap)
{
	size_t len;

	if (*src == '=' || *src == '@') {
		snprintf(out, cap, "%s", src + 1);
		return;
	}
	/* LUA_IDSIZE 60: up to 48 bytes before a control character, cut at 45 with "...". */
	for (len = 0; len < 60 - 12; len++)
		if ((unsigned char)src[len] < ' ')
			break;
	if (src[len])
		snprintf(out, cap, "[string \"%.*s...\"]", (int)(len > 45 ? 45 : len), src);
	else
		snprintf(out, cap, "[string \"%s\"]", src);
}

int lj_proto__read(const struct lua_reader *rd, uint64_t addr, struct lj_proto *p)
{
	uint8_t h[LJ_PROTO_SIZE];
	int64_t li, uv, vi;
	uint32_t size;
	char *src = NULL, chunk[LUA_STR_MAX + 32];

	memset(p, 0, sizeof(*p));
	if (!addr || (addr & 7) || rd->read(rd->ctx, addr, h, sizeof(h)))
		return -EFAULT;
	size = u32_at(h, 56);
	if (h[9] != LJ_GCT_PROTO || size < LJ_PROTO_SIZE || size > LJ_PROTO_MAX ||
	    (uint64_t)u32_at(h, 12) * 4 > size - LJ_PROTO_SIZE)
		return -ESTALE;
	p->b = malloc(size);
	if (!p->b)
		return -ENOMEM;
	if (rd->read(rd->ctx, addr, p->b, size)) {
		lj_proto__fini(p);
		return -EFAULT;
	}
	p->addr = addr;
	p->size = size;
	p->sizebc = u32_at(p->b, 12);
	p->bc = (const uint32_t *)(p->b + LJ_PROTO_SIZE);
	p->k = u64_at(p->b, 32);
	p->sizekgc = u32_at(p->b, 48);
	p->sizeuv = p->b[60];
	p->firstline = (int)u32_at(p->b, 72);
	p->numline = (int)u32_at(p->b, 76);
	li = inside(u64_at(p->b, 80), addr, size);
	uv = inside(u64_at(p->b, 88), addr, size);
	vi = inside(u64_at(p->b, 96), addr, size);
	if (li == -1 || uv == -1 || vi == -1 || inside(p->k, addr, size + 1) < 0) {
		lj_proto__fini(p);
		return -ESTALE;
	}
	/* The debug tables end the block: each is read up to its end, NUL-checked when used. */
	p->lineinfo = li >= 0 ? p->b + li : NULL;
	p->uvinfo = uv >= 0 ? (const char *)p->b + uv : NULL;
	p->varinfo = vi >= 0 ? (const char *)p->b + vi : NULL;
	if (p->b[size - 1] != 0 && (p->uvinfo || p->varinfo)) {
		/* Its names and variables end with a NUL (VARNAME_END): else not read. */
		p->uvinfo = NULL;
		p->varinfo = NULL;
	}
	p->kstr = calloc(p->sizekgc ? p->sizekgc : 1, sizeof(*p->kstr));
	if (!p->kstr) {
		lj_proto__fini(p);
		return -ENOMEM;
	}
	if (lj_str_read(rd, u64_at(p->b, 64), &src))
		src = NULL;
	shortname(src ? src : "=?", chunk, sizeof(chunk));
	free(src);
	p->chunk = strdup(chunk);
	if (!p->chunk) {
		lj_proto__fini(p);
		return -ENOMEM;
	}
	return 0;
}

void lj_proto__fini(struct lj_proto *p)
{
	for (uint32_t i = 0; p->kstr && i < p->sizekgc; i++)
		free(p->kstr[i]);
	free(p->kstr);
	free(p->chunk);
	free(p->b);
	memset(p, 0, sizeof(*p));
}

int lj_proto__pos(const struct lj_proto *p, uint64_t pc)
{
	uint64_t bc = p->addr + LJ_PROTO_SIZE;

	if (pc <= bc || (pc - bc) % 4 || (pc - bc) / 4 > p->sizebc)
		return -1;
	return (int)((pc - bc) / 4) - 1;
}

int lj_proto__line(const struct lj_proto *p, int pos)
{
	const uint8_t *li = p->lineinfo;
	size_t at;

	if (!li || pos < 0 || (uint32_t)pos > p->sizebc)
		return 0;
	if ((uint32_t)pos == p->sizebc)
		return p->firstline + p->numline;
	if (pos-- == 0)
		return p->firstline;
	/* The table's entries: 1, 2 or 4 bytes, by how many lines the function has. */
	at = (size_t)(li - p->b);
	if (p->numline < 256)
		return at + (size_t)pos < p->size ? p->firstline + li[pos] : 0;
	if (p->numline < 65536) {
		uint16_t v;

		if (at + 2 * (size_t)pos + 2 > p->size)
			return 0;
		memcpy(&v, li + 2 * pos, 2);
		return p->firstline + v;
	}
	if (at + 4 * (size_t)pos + 4 > p->size)
		return 0;
	return p->firstline + (int)u32_at(li, 4 * (size_t)pos);
}

bool lj_proto__is_main(const struct lj_proto *p)
{
	return !p->firstline && p->numline;
}

/* An unsigned LEB128 from the varinfo at *@s (lj_buf_ruleb128). */
static uint32_t uleb(const uint8_t **s, const uint8_t *end)
{
	uint32_t v = 0;
	int shift = 0;

	while (*s < end) {
		uint8_t c = *(*s)++;

		if (shift < 32)
			v |= (uint32_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* The fixed names of lj_debug.h's VARNAMEDEF (1 to 6; 0 ends the table). */
static const char *const fixed_names[] = {
	NULL, "(for index)", "(for limit)", "(for step)", "(for generator)", "(for state)",
	"(for control)",
};

/* debug_varname: the local in @slot at position @pos, or NULL. */
static const char *varname(const struct lj_proto *p, uint32_t pos, uint32_t slot)
{
	const uint8_t *s = (const uint8_t *)p->varinfo, *end = p->b + p->size;
	uint32_t last = 0;

	while (s && s < end) {
		const char *name = (const char *)s;
		uint32_t vn = *s, start, stop;

		if (vn == 0)
			break;
		if (vn >= 7)
			s += strnlen(name, (size_t)(end - s));	/* the NUL at the block's end stops it */
		s++;
		start = last = last + uleb(&s, end);
		if (start > pos)
			break;
		stop = start + uleb(&s, end);
		if (pos < stop && slot-- == 0)
			return vn < 7 ? fixed_names[vn] : name;
	}
	return NULL;
}

/* lj_debug_uvname: upvalue @idx's name ("" if none). */
static const char *uvname(const struct lj_proto *p, uint32_t idx)
{
	const char *s = p->uvinfo, *end = (const char *)p->b + p->size;

	if (!s || idx >= p->sizeuv)
		return "";
	while (idx-- && s < end)
		s += strnlen(s, (size_t)(end - s)) + 1;
	return s < end ? s : "";
}

/* Constant string ~@d (a GGET's or TGETS's), read at first use. */
static const char *kstr(const struct lua_reader *rd, struct lj_proto *p, uint32_t d)
{
	uint64_t ref;

	if (d >= p->sizekgc || inside(p->k - 8 * (uint64_t)(d + 1), p->addr, p->size) < 0)
		return NULL;
	if (!p->kstr[d]) {
		ref = u64_at(p->b, (size_t)(p->k - 8 * (uint64_t)(d + 1) - p->addr));
		if (lj_str_read(rd, ref & ((1ULL << 47) - 1), &p->kstr[d]))
			return NULL;
	}
	return p->kstr[d];
}

/*
 * lj_bc.h's modes as a name needs them: an instruction's A operand a
 * destination ('d') or a base of slots ('b'); the metamethod a call from
 * it runs (lj_obj.h's MMDEF, "__" before each; "call" for the calls).
 */
static const char op_a[98] =
	"------------dd----ddddddddddddddddddddddddddbd-----ddd"	/* 0-53 */
	"d-dddd---b-bbbbbbbbb---bbbbbbbb------------";			/* 54-96 */

static const char *op_mm(uint32_t op)
{
	static const char *const mm[] = {
		"__lt", "__lt", "__le", "__le", "__eq", "__eq", "__eq", "__eq", "__eq", "__eq",
		"__eq", "__eq", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "__unm", "__len",
		"__add", "__sub", "__mul", "__div", "__mod", "__add", "__sub", "__mul", "__div",
		"__mod", "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__concat",
	};

	if (op < sizeof(mm) / sizeof(mm[0]))
		return mm[op];
	if (op >= 51 && op <= 53)
		return "__gc";
	if (op == 54 || (op >= 56 && op <= 59))
		return "__index";
	if (op == 55 || (op >= 60 && op <= 64))
		return "__newindex";
	if (op >= 65 && op <= 70)
		return "call";
	return NULL;
}

#define BC_MOV 18
#define BC_KNIL 44
#define BC_UGET 45
#define BC_GGET 54
#define BC_TGETS 57
#define BC_ITERC 69
#define BC_A(i) (((i) >> 8) & 0xff)
#define BC_B(i) ((i) >> 24)
#define BC_C(i) (((i) >> 16) & 0xff)
#define BC_D(i) ((i) >> 16)

/* lj_debug_slotname: what gave @slot its value before position @pos. */
static int slotname(const struct lua_reader *rd, struct lj_proto *p, uint32_t pos,
		    uint32_t slot, const char **what, const char **name)
{
	for (int restarts = 0; restarts < 256; restarts++) {
		const char *l = varname(p, pos, slot);
		uint32_t at = pos;
		bool moved = false;

		if (l) {
			*what = "local";
			*name = l;
			return 0;
		}
		while (--at > 0 && !moved) {
			uint32_t ins = p->bc[at], op = ins & 0xff, ra = BC_A(ins);

			if (op >= 97)
				return -ENOENT;
			if (op_a[op] == 'b') {
				if (slot >= ra && (op != BC_KNIL || slot <= BC_D(ins)))
					return -ENOENT;
				continue;
			}
			if (op_a[op] != 'd' || ra != slot)
				continue;
			switch (op) {
			case BC_MOV:
				slot = BC_D(ins);
				pos = at;
				moved = true;
				break;
			case BC_GGET:
				*what = "global";
				*name = kstr(rd, p, BC_D(ins));
				return *name ? 0 : -ENOENT;
			case BC_TGETS: {
				uint32_t prev = p->bc[at - 1];

				*name = kstr(rd, p, BC_C(ins));
				/* A method: the object moved to ra + 2 (two-slot frames) just before. */
				*what = (prev & 0xff) == BC_MOV && BC_A(prev) == ra + 2 &&
						BC_D(prev) == BC_B(ins) ? "method" : "field";
				return *name ? 0 : -ENOENT;
			}
			case BC_UGET:
				*what = "upvalue";
				*name = uvname(p, BC_D(ins));
				return 0;
			default:
				return -ENOENT;
			}
		}
		if (!moved)
			return -ENOENT;
	}
	return -ENOENT;
}

int lj_proto__callname(const struct lua_reader *rd, struct lj_proto *p, int pos,
		       const char **what, const char **name)
{
	uint32_t ins, op, slot;
	const char *mm;

	if (pos < 0 || (uint32_t)pos >= p->sizebc)
		return -ENOENT;
	ins = p->bc[pos];
	op = ins & 0xff;
	mm = op < 97 ? op_mm(op) : NULL;
	if (!mm)
		return -ENOENT;
	if (strcmp(mm, "call")) {
		*what = "metamethod";
		*name = mm;
		return 0;
	}
	slot = BC_A(ins);
	if (op == BC_ITERC)
		slot -= 3;
	return slotname(rd, p, (uint32_t)pos, slot, what, name);
}

int lj_state__main(const struct lua_reader *rd, const struct lj_layout *ly, uint64_t addr,
		   uint64_t *main)
{
	uint8_t l[LJ_L_GLREF + 8];	/* its header (gct at 9) and glref */
	uint64_t g, m, mg;

	if (rd->read(rd->ctx, addr, l, sizeof(l)) || l[9] != LJ_GCT_THREAD)
		return -ENOENT;
	g = u64_at(l, LJ_L_GLREF);
	if (!g || rd->read(rd->ctx, g + LJ_G_MAINTHREF, &m, sizeof(m)))
		return -ENOENT;
	m &= (1ULL << 47) - 1;
	if (!m || rd->read(rd->ctx, m, l, sizeof(l)) || l[9] != LJ_GCT_THREAD)
		return -ENOENT;
	mg = u64_at(l, LJ_L_GLREF);
	if (mg != g || m + ly->gg_g != g)
		return -ENOENT;
	*main = m;
	return 0;
}
